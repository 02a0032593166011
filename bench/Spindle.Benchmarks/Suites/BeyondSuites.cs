using BenchmarkDotNet.Attributes;
using Spindle.Workloads;
using Spindle.Workloads.Beyond;

namespace Spindle.Benchmarks.Suites;

/// <summary>4096 random 4 KiB reads over a 1 GiB file with 1 to 128 in flight, cached and O_DIRECT.</summary>
public class RandomRead4K : AsyncWorkloadSuite
{
    /// <summary>Reads in flight.</summary>
    [Params(1, 8, 32, 128)]
    public int QueueDepth { get; set; }

    /// <summary>True: O_DIRECT misses; false: page-cache hits.</summary>
    [Params(false, true)]
    public bool Direct { get; set; }

    /// <inheritdoc />
    protected override Workload CreateRow() => new RandomReads(MatrixScale.Full.HugeFile, QueueDepth, Direct, MatrixScale.Full.RandomReadsPerInvocation);
}

/// <summary>256 MiB of sequential 1 MiB O_DIRECT reads or writes with 8 in flight.</summary>
public class SequentialDirect1M : AsyncWorkloadSuite
{
    /// <summary>Read or write.</summary>
    [Params(Direction.Read, Direction.Write)]
    public Direction Direction { get; set; }

    /// <inheritdoc />
    protected override Workload CreateRow() => new SequentialDirect(Direction, MatrixScale.Full.SequentialBytes, Units.MiB, 8);
}

/// <summary>A 1 GiB file copied by <see cref="File.Copy(string, string, bool)"/> and by <c>SpindleFile.Copy</c>.</summary>
public class FileCopy1G : WorkloadSuite
{
    /// <inheritdoc />
    protected override Workload CreateRow() => new FileCopy(Units.GiB);
}

/// <summary>The queue-depth sweep: O_DIRECT 4 KiB random reads at 1 to 128 in flight, System.IO against Spindle's default.</summary>
public class QueueDepthSweep : WorkloadSuite
{
    /// <summary>Reads in flight.</summary>
    [Params(1, 2, 4, 8, 16, 32, 64, 128)]
    public int QueueDepth { get; set; }

    /// <inheritdoc />
    protected override Workload CreateRow() => RandomReads.Sweep(MatrixScale.Full.HugeFile, QueueDepth, MatrixScale.Full.RandomReadsPerInvocation);
}
