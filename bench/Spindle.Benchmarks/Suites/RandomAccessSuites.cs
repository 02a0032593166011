using BenchmarkDotNet.Attributes;
using Spindle.Workloads;
using Spindle.Workloads.RandomAccess;

namespace Spindle.Benchmarks.Suites;

/// <summary>The (file, block) pairs of SPEC §5's RandomAccess rows.</summary>
internal static class RandomAccessSizes
{
    public static IEnumerable<SizePair> All => [new(Units.MiB, 4 * Units.KiB), new(100 * Units.MiB, 16 * Units.KiB)];
}

/// <summary><c>RandomAccess.Read</c> / <c>Write</c>.</summary>
public class RandomAccessSync : WorkloadSuite
{
    /// <summary>Read or write.</summary>
    [Params(Direction.Read, Direction.Write)]
    public Direction Direction { get; set; }

    /// <summary>File and block size.</summary>
    [ParamsSource(nameof(Sizes))]
    public SizePair Size { get; set; } = null!;

    /// <summary>The sizes of the matrix.</summary>
    public static IEnumerable<SizePair> Sizes => RandomAccessSizes.All;

    /// <inheritdoc />
    protected override Workload CreateRow() => new RandomAccessTransfer(Direction, async: false, Size.File, Size.Block);
}

/// <summary><c>RandomAccess.ReadAsync</c> / <c>WriteAsync</c> on every engine.</summary>
public class RandomAccessAsync : AsyncWorkloadSuite
{
    /// <summary>Read or write.</summary>
    [Params(Direction.Read, Direction.Write)]
    public Direction Direction { get; set; }

    /// <summary>File and block size.</summary>
    [ParamsSource(nameof(Sizes))]
    public SizePair Size { get; set; } = null!;

    /// <summary>The sizes of the matrix.</summary>
    public static IEnumerable<SizePair> Sizes => RandomAccessSizes.All;

    /// <inheritdoc />
    protected override Workload CreateRow() => new RandomAccessTransfer(Direction, async: true, Size.File, Size.Block);
}

/// <summary><c>RandomAccess.Read(IReadOnlyList)</c> / <c>Write(IReadOnlyList)</c> with 4 buffers.</summary>
public class RandomAccessScatterGather : WorkloadSuite
{
    /// <summary>ReadScatter or WriteGather.</summary>
    [Params(Direction.Read, Direction.Write)]
    public Direction Direction { get; set; }

    /// <summary>The size of each of the 4 buffers.</summary>
    [Params(4 * Units.KiB, 16 * Units.KiB)]
    public int BufferSize { get; set; }

    /// <inheritdoc />
    protected override Workload CreateRow() => new ScatterGather(Direction, async: false, 4, BufferSize, Units.MiB);
}

/// <summary>The asynchronous scatter/gather rows on every engine.</summary>
public class RandomAccessScatterGatherAsync : AsyncWorkloadSuite
{
    /// <summary>ReadScatter or WriteGather.</summary>
    [Params(Direction.Read, Direction.Write)]
    public Direction Direction { get; set; }

    /// <summary>The size of each of the 4 buffers.</summary>
    [Params(4 * Units.KiB, 16 * Units.KiB)]
    public int BufferSize { get; set; }

    /// <inheritdoc />
    protected override Workload CreateRow() => new ScatterGather(Direction, async: true, 4, BufferSize, Units.MiB);
}
