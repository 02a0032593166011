using BenchmarkDotNet.Attributes;
using Spindle.Workloads;

namespace Spindle.Benchmarks.Suites;

/// <summary>
/// Runs one <see cref="Workload"/> under BenchmarkDotNet: System.IO is the baseline, allocations are
/// measured. Subclasses turn their [Params] into the workload.
/// </summary>
[MemoryDiagnoser]
public abstract class WorkloadSuite
{
    private BenchFiles? _files;

    /// <summary>The row being measured.</summary>
    protected Workload Row { get; private set; } = null!;

    /// <summary>Builds the row from the current parameters.</summary>
    protected abstract Workload CreateRow();

    /// <summary>Creates the files and opens the row.</summary>
    [GlobalSetup]
    public void Setup()
    {
        string directory = Environment.GetEnvironmentVariable("SPINDLE_BENCH_DIR") is { Length: > 0 } dir ? dir : Path.GetTempPath();
        _files = new BenchFiles(directory);
        Row = CreateRow();
        Row.Setup(_files);
    }

    /// <summary>Closes the row and deletes its files.</summary>
    [GlobalCleanup]
    public void Cleanup()
    {
        Row.Dispose();
        _files?.Dispose();
    }

    /// <summary>The baseline: System.IO.</summary>
    [Benchmark(Baseline = true, Description = "System.IO")]
    public ValueTask SystemIO() => Row.RunAsync(Contender.SystemIO);

    /// <summary>Spindle as a user gets it: the default engine (Auto).</summary>
    [Benchmark(Description = "Spindle Auto")]
    public ValueTask SpindleAuto() => Row.RunAsync(Contender.SpindleAuto);
}

/// <summary>An asynchronous row: also every Spindle engine by name.</summary>
public abstract class AsyncWorkloadSuite : WorkloadSuite
{
    /// <summary>Spindle on the Sync engine.</summary>
    [Benchmark(Description = "Spindle Sync")]
    public ValueTask SpindleSync() => Row.RunAsync(Contender.SpindleSync);

    /// <summary>Spindle on the ThreadPool engine.</summary>
    [Benchmark(Description = "Spindle ThreadPool")]
    public ValueTask SpindleThreadPool() => Row.RunAsync(Contender.SpindleThreadPool);

    /// <summary>Spindle on the io_uring engine.</summary>
    [Benchmark(Description = "Spindle IoUring")]
    public ValueTask SpindleIoUring() => Row.RunAsync(Contender.SpindleIoUring);
}

/// <summary>A (file size, block size) pair of the matrix, shown as people read it.</summary>
/// <param name="File">The file size in bytes.</param>
/// <param name="Block">The user buffer or block size in bytes.</param>
public sealed record SizePair(long File, int Block)
{
    /// <inheritdoc />
    public override string ToString() => $"{Units.Bytes(File)}, {Units.Bytes(Block)}";
}
