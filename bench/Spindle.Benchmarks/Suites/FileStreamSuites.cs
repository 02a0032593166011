using BenchmarkDotNet.Attributes;
using Spindle.Workloads;
using Spindle.Workloads.FileStreams;

namespace Spindle.Benchmarks.Suites;

/// <summary><c>SeekForward</c> / <c>SeekBackward</c> over a 1 KiB file.</summary>
public class FileStreamSeekSuite : WorkloadSuite
{
    /// <summary>Forward or backward.</summary>
    [Params(true, false)]
    public bool Forward { get; set; }

    /// <summary>The stream's options.</summary>
    [Params(FileOptions.None, FileOptions.Asynchronous)]
    public FileOptions Options { get; set; }

    /// <inheritdoc />
    protected override Workload CreateRow() => new FileStreamSeek(Forward, Options);
}

/// <summary><c>Length</c> of a stream opened with share Read or ReadWrite.</summary>
public class FileStreamGetLengthSuite : WorkloadSuite
{
    /// <summary>The share mode.</summary>
    [Params(FileShare.Read, FileShare.ReadWrite)]
    public FileShare Share { get; set; }

    /// <inheritdoc />
    protected override Workload CreateRow() => new FileStreamGetLength(Share);
}

/// <summary>The (file, user buffer) pairs of the buffered stream rows.</summary>
internal static class FileStreamSizes
{
    public static IEnumerable<SizePair> Buffered =>
        [new(Units.KiB, Units.KiB), new(Units.MiB, 512), new(Units.MiB, 4 * Units.KiB), new(100 * Units.MiB, 4 * Units.KiB)];

    public static IEnumerable<SizePair> Unbuffered => [new(Units.MiB, 16 * Units.KiB), new(100 * Units.MiB, 16 * Units.KiB)];
}

/// <summary><c>Read</c> / <c>Write</c> with a 4 KiB stream buffer.</summary>
public class FileStreamSync : WorkloadSuite
{
    /// <summary>Read or write.</summary>
    [Params(Direction.Read, Direction.Write)]
    public Direction Direction { get; set; }

    /// <summary>File and user buffer size.</summary>
    [ParamsSource(nameof(Sizes))]
    public SizePair Size { get; set; } = null!;

    /// <summary>The stream's options.</summary>
    [Params(FileOptions.None, FileOptions.Asynchronous)]
    public FileOptions Options { get; set; }

    /// <summary>The sizes of the matrix.</summary>
    public static IEnumerable<SizePair> Sizes => FileStreamSizes.Buffered;

    /// <inheritdoc />
    protected override Workload CreateRow() => new FileStreamTransfer(Direction, async: false, Size.File, Size.Block, Options);
}

/// <summary><c>ReadAsync</c> / <c>WriteAsync</c> with a 4 KiB stream buffer, on every engine.</summary>
public class FileStreamAsync : AsyncWorkloadSuite
{
    /// <summary>Read or write.</summary>
    [Params(Direction.Read, Direction.Write)]
    public Direction Direction { get; set; }

    /// <summary>File and user buffer size.</summary>
    [ParamsSource(nameof(Sizes))]
    public SizePair Size { get; set; } = null!;

    /// <summary>The stream's options.</summary>
    [Params(FileOptions.None, FileOptions.Asynchronous)]
    public FileOptions Options { get; set; }

    /// <summary>The sizes of the matrix.</summary>
    public static IEnumerable<SizePair> Sizes => FileStreamSizes.Buffered;

    /// <inheritdoc />
    protected override Workload CreateRow() => new FileStreamTransfer(Direction, async: true, Size.File, Size.Block, Options);
}

/// <summary><c>*_NoBuffering</c>: the stream's buffer disabled (bufferSize 0), sync and async.</summary>
public class FileStreamNoBuffering : AsyncWorkloadSuite
{
    /// <summary>Read or write.</summary>
    [Params(Direction.Read, Direction.Write)]
    public Direction Direction { get; set; }

    /// <summary>Read/Write or ReadAsync/WriteAsync.</summary>
    [Params(false, true)]
    public bool Async { get; set; }

    /// <summary>File and user buffer size.</summary>
    [ParamsSource(nameof(Sizes))]
    public SizePair Size { get; set; } = null!;

    /// <summary>The stream's options.</summary>
    [Params(FileOptions.None, FileOptions.Asynchronous)]
    public FileOptions Options { get; set; }

    /// <summary>The sizes of the matrix.</summary>
    public static IEnumerable<SizePair> Sizes => FileStreamSizes.Unbuffered;

    /// <inheritdoc />
    protected override Workload CreateRow() => new FileStreamTransfer(Direction, Async, Size.File, Size.Block, Options, bufferSize: 0);
}

/// <summary>Unbuffered writes of 16 KiB into a file preallocated to its final size.</summary>
public class FileStreamPreallocated : AsyncWorkloadSuite
{
    /// <summary>The file size.</summary>
    [Params(Units.MiB, 100 * Units.MiB)]
    public long FileSize { get; set; }

    /// <summary>Write or WriteAsync (opened with FileOptions.Asynchronous).</summary>
    [Params(false, true)]
    public bool Async { get; set; }

    /// <inheritdoc />
    protected override Workload CreateRow() => new FileStreamTransfer(Direction.Write, Async, FileSize, 16 * Units.KiB,
        Async ? FileOptions.Asynchronous : FileOptions.None, bufferSize: 0, preallocationSize: FileSize);
}

/// <summary><c>CopyTo</c> / <c>CopyToAsync</c> from a file stream into a new file stream.</summary>
public class FileStreamCopyToFileSuite : AsyncWorkloadSuite
{
    /// <summary>The file size.</summary>
    [Params(Units.MiB, 100 * Units.MiB)]
    public long FileSize { get; set; }

    /// <summary>CopyTo or CopyToAsync.</summary>
    [Params(false, true)]
    public bool Async { get; set; }

    /// <inheritdoc />
    protected override Workload CreateRow() => new FileStreamCopyToFile(Async, FileSize);
}

/// <summary>The 1 MB benchmark of the .NET 6 file I/O post: a 1 MB file read and written with an 8 kB buffer, <c>useAsync: true</c>, bufferSize 4096.</summary>
public class Net6Post : AsyncWorkloadSuite
{
    /// <summary>ReadAsync or WriteAsync.</summary>
    [Params(Direction.Read, Direction.Write)]
    public Direction Direction { get; set; }

    /// <inheritdoc />
    protected override Workload CreateRow() => new FileStreamTransfer(Direction, async: true, 1_000_000, 8_000, FileOptions.Asynchronous,
        name: $"Net6Post.{Direction}Async(1 MB, 8 kB, useAsync)");
}
