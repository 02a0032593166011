using Spindle.Workloads;

namespace Spindle.Tool.Bench;

/// <summary>One contender's figures in a dispatch cell.</summary>
/// <param name="Contender">Who ran.</param>
/// <param name="OperationsPerSecond">Reads per second, median over the rounds.</param>
/// <param name="MinOperationsPerSecond">The slowest round.</param>
/// <param name="MaxOperationsPerSecond">The fastest round.</param>
/// <param name="CpuNsPerOperation">Process user + system CPU time per read (every thread, the spin included), median over the rounds.</param>
/// <param name="P50Ns">The median read latency, call to resumed continuation: the median over the rounds of each round's.</param>
/// <param name="P99Ns">The 99th percentile read latency, the same way.</param>
/// <param name="WorstWaitNs">The longest single read of every round.</param>
/// <param name="Rounds">Rounds measured.</param>
public sealed record DispatchContenderResult(Contender Contender, double OperationsPerSecond, double MinOperationsPerSecond, double MaxOperationsPerSecond,
    double CpuNsPerOperation, double P50Ns, double P99Ns, double WorstWaitNs, int Rounds)
{
    /// <summary>(fastest − slowest round) / median: how much the rounds disagreed.</summary>
    public double Spread => OperationsPerSecond > 0 ? (MaxOperationsPerSecond - MinOperationsPerSecond) / OperationsPerSecond : double.NaN;
}

/// <summary>Everything measured in one dispatch cell.</summary>
public sealed record DispatchCellResult
{
    /// <summary>The cell.</summary>
    public required DispatchCell Cell { get; init; }

    /// <summary>Why the cell did not run (no such storage here, not root, …), or null.</summary>
    public string? Skipped { get; init; }

    /// <summary>What the reads went to.</summary>
    public string Storage { get; init; } = "";

    /// <summary>The processors the measuring process saw (<see cref="Environment.ProcessorCount"/>): 1 in a one-core cell.</summary>
    public int Processors { get; init; }

    /// <summary>Every contender's figures, System.IO first.</summary>
    public IReadOnlyList<DispatchContenderResult> Results { get; init; } = [];

    /// <summary>fio's io_uring engine at the same depth (one job, <c>iodepth</c> = in flight), median round; null where the continuation works or fio did not run.</summary>
    public FioResult? FioIoUring { get; init; }

    /// <summary>fio's psync engine with one job per caller (<c>numjobs</c> = in flight), median round; null as <see cref="FioIoUring"/>.</summary>
    public FioResult? FioPsync { get; init; }

    /// <summary>Why there is no fio figure where one was due, or "—".</summary>
    public string FioNote { get; init; } = "—";

    /// <summary>Warm-up passes (every contender once) run before the rounds: at least 32, until two in a row compiled no method.</summary>
    public int WarmupPasses { get; init; }

    /// <summary>Methods the JIT compiled while the callers of the measured rounds ran (0 in steady state): what the rounds still paid for compilation.</summary>
    public long MethodsCompiledInRounds { get; init; }

    /// <summary>
    /// Auto ÷ System.IO of the cell's first measurement when that read below 0.97 and the cell was measured again with
    /// more rounds (<see cref="DispatchSection"/>), whose figures these are; null when the first stood.
    /// </summary>
    public double? FirstPassRatio { get; init; }

    /// <summary>System.IO's figures, or null.</summary>
    public DispatchContenderResult? SystemIO => Results.FirstOrDefault(r => r.Contender == Contender.SystemIO);

    /// <summary>Spindle with its defaults, the headline; or null.</summary>
    public DispatchContenderResult? Auto => Results.FirstOrDefault(r => r.Contender == Contender.SpindleAuto);

    /// <summary>The better of fio's two engines by IOPS: the limit of this storage at this depth; null without fio.</summary>
    public FioResult? Limit => (FioIoUring, FioPsync) switch
    {
        ({ } uring, { } psync) => uring.Iops >= psync.Iops ? uring : psync,
        ({ } uring, null) => uring,
        (null, { } psync) => psync,
        _ => null,
    };

    /// <summary>The limit's fio engine name, or null.</summary>
    public string? LimitEngine => Limit is null ? null : ReferenceEquals(Limit, FioIoUring) ? "io_uring" : "psync";

    /// <summary>Auto's operations per second over System.IO's: above 1 Spindle's default does more.</summary>
    public double Ratio => SystemIO is { } s && Auto is { } a && s.OperationsPerSecond > 0 ? a.OperationsPerSecond / s.OperationsPerSecond : double.NaN;

    /// <summary>Auto's operations per second as a fraction of the limit's; NaN without one.</summary>
    public double ShareOfLimit => Auto is { } a && Limit is { } l && l.Iops > 0 ? a.OperationsPerSecond / l.Iops : double.NaN;
}

/// <summary>The dispatch section of a run: every cell and how the continuation's work was calibrated.</summary>
public sealed class DispatchMatrixResult
{
    /// <summary>Every cell that was selected, in matrix order.</summary>
    public required IReadOnlyList<DispatchCellResult> Cells { get; init; }

    /// <summary>The timing of each cell.</summary>
    public required DispatchSettings Settings { get; init; }

    /// <summary>Spin-loop iterations per microsecond of thread CPU time, calibrated at the start of the section.</summary>
    public required double SpinIterationsPerMicrosecond { get; init; }

    /// <summary>The thread CPU time a 100 µs spin took right after the calibration (the check of the calibration).</summary>
    public required double SpinCheckNs { get; init; }

    /// <summary>The same cell on the other core count, when it ran.</summary>
    public DispatchCellResult? PartnerOf(DispatchCellResult cell) => Cells.FirstOrDefault(c => c.Cell == cell.Cell.Partner());
}
