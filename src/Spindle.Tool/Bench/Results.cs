using Spindle.Workloads;

namespace Spindle.Tool.Bench;

/// <summary>One contender's figures for a row, per operation.</summary>
/// <param name="Contender">Who ran.</param>
/// <param name="MedianNs">The median over the rounds of the time per operation.</param>
/// <param name="MinNs">The fastest round.</param>
/// <param name="MaxNs">The slowest round.</param>
/// <param name="AllocatedBytesPerOperation">Bytes allocated per operation (median over the rounds, from <see cref="GC.GetTotalAllocatedBytes(bool)"/>).</param>
/// <param name="Rounds">How many rounds were measured.</param>
/// <param name="InvocationsPerRound">How many invocations each round ran.</param>
public sealed record ContenderResult(Contender Contender, double MedianNs, double MinNs, double MaxNs,
    double AllocatedBytesPerOperation, int Rounds, int InvocationsPerRound)
{
    /// <summary>The time per operation of every measured round, in order (the stability stage's rounds last).</summary>
    public IReadOnlyList<double> RoundNs { get; init; } = [];

    /// <summary>The relative half-width of the confidence interval of <see cref="MedianNs"/> (0.04 = ±4 %); NaN without rounds.</summary>
    public double Spread => RoundNs.Count > 0 ? RatioEstimate.RelativeSpread(RoundNs)
        : MedianNs > 0 ? (MaxNs - MinNs) / 2 / MedianNs : double.NaN;

    /// <summary>Process CPU time (user + system, every thread) per operation, median over the rounds; NaN when unknown.</summary>
    public double CpuNsPerOperation { get; init; } = double.NaN;

    /// <summary>
    /// Context switches of the process's threads (<c>getrusage</c>: voluntary + involuntary) per operation, median over
    /// the rounds; NaN when unknown. A thread handing a completion to a sleeping one costs at least one.
    /// </summary>
    public double ContextSwitchesPerOperation { get; init; } = double.NaN;

    /// <summary>Spindle's <c>io_uring_enter</c> calls per operation (its meter's count), median over the rounds; NaN when unknown.</summary>
    public double RingEntersPerOperation { get; init; } = double.NaN;

    /// <summary>The median latency of one operation over every measured round; NaN when the row does not record latencies.</summary>
    public double P50Ns { get; init; } = double.NaN;

    /// <summary>The 99th percentile latency of one operation over every measured round; NaN when the row does not record latencies.</summary>
    public double P99Ns { get; init; } = double.NaN;

    /// <summary>The longest single operation over every measured round (the worst wait); NaN when the row does not record latencies.</summary>
    public double WorstNs { get; init; } = double.NaN;

    /// <summary>How many latencies the percentiles come from.</summary>
    public int LatencySamples { get; init; }

    /// <summary>Operations per second at the median time.</summary>
    public double OperationsPerSecond => MedianNs > 0 ? 1e9 / MedianNs : double.NaN;
}

/// <summary>fio's (or a reference command's) figures for a row.</summary>
/// <param name="Command">The command that ran.</param>
/// <param name="Iops">Operations per second.</param>
/// <param name="BytesPerSecond">Bandwidth.</param>
public sealed record FioResult(string Command, double Iops, double BytesPerSecond)
{
    /// <summary>Nanoseconds per operation at fio's rate.</summary>
    public double NsPerOperation => Iops > 0 ? 1e9 / Iops : double.NaN;

    /// <summary>fio's I/Os in its run (<c>total_ios</c>); NaN for a reference command.</summary>
    public double Operations { get; init; } = double.NaN;

    /// <summary>fio's CPU time (usr_cpu + sys_cpu × its runtime) per I/O; NaN for a reference command.</summary>
    public double CpuNsPerOperation { get; init; } = double.NaN;

    /// <summary>fio's context switches (its job's <c>ctx</c>) per I/O; NaN for a reference command.</summary>
    public double ContextSwitchesPerOperation { get; init; } = double.NaN;

    /// <summary>fio's <c>io_uring_enter</c> calls per I/O, counted by <c>perf stat</c> around it; NaN when not counted.</summary>
    public double RingEntersPerOperation { get; init; } = double.NaN;

    /// <summary>fio's median latency per I/O, submission and completion (<c>lat_ns</c> 50th percentile); NaN when not reported.</summary>
    public double P50Ns { get; init; } = double.NaN;

    /// <summary>fio's 99th percentile latency per I/O (<c>lat_ns</c>); NaN when not reported.</summary>
    public double P99Ns { get; init; } = double.NaN;

    /// <summary>fio's longest single I/O (<c>lat_ns</c> max); NaN when not reported or the side did no I/O.</summary>
    public double WorstNs { get; init; } = double.NaN;
}

/// <summary>Everything measured for one row of the matrix.</summary>
public sealed class RowResult
{
    /// <summary>The row's name.</summary>
    public required string Name { get; init; }

    /// <summary>FileStream, RandomAccess, Beyond or Sweep.</summary>
    public required string Group { get; init; }

    /// <summary>True for async rows (target 0.50).</summary>
    public required bool IsAsync { get; init; }

    /// <summary>Operations per invocation (reads of a random-read row, 1 elsewhere).</summary>
    public required int OperationsPerInvocation { get; init; }

    /// <summary>I/O calls per invocation, 0 when the row is not a loop of calls.</summary>
    public long CallsPerInvocation { get; init; }

    /// <summary>Operations in flight for the random-read and sweep rows, 0 elsewhere.</summary>
    public int InFlight { get; init; }

    /// <summary>True when the row recorded each operation's latency (random-read, sequential and sweep rows).</summary>
    public bool RecordsLatency { get; init; }

    /// <summary>Bytes a contender allocated per I/O call, NaN when the row has no call count.</summary>
    public double AllocatedPerCall(ContenderResult result) =>
        CallsPerInvocation > 0 ? result.AllocatedBytesPerOperation * OperationsPerInvocation / CallsPerInvocation : double.NaN;

    /// <summary>True when the row has a fio job (whether or not fio ran): its mechanism figures are shown beside fio's.</summary>
    public bool HasFioJob { get; init; }

    /// <summary>CPU-bound processes that ran beside this row (<c>--busy</c>), 0 on a quiet run.</summary>
    public int BusyNeighbours { get; init; }

    /// <summary>For a row measured beside busy processes, the same row measured just before without them; else null.</summary>
    public RowResult? QuietTwin { get; init; }

    /// <summary>Figures per contender that ran; System.IO first.</summary>
    public required IReadOnlyList<ContenderResult> Results { get; init; }

    /// <summary>Why the row did not run (e.g. no O_DIRECT on this file system), or null.</summary>
    public string? Skipped { get; init; }

    /// <summary>fio's figure, or null.</summary>
    public FioResult? Fio { get; init; }

    /// <summary>What the fio column says when there is no figure: "—" (no fio row), "n/a (fio not installed)", or an error.</summary>
    public string FioNote { get; init; } = "—";

    /// <summary>System.IO's figures, or null when the row was skipped.</summary>
    public ContenderResult? SystemIO => For(Contender.SystemIO);

    /// <summary>Spindle as a user gets it (<see cref="IoEngine.Auto"/>): the headline; null when the row was skipped.</summary>
    public ContenderResult? Auto => For(Contender.SpindleAuto);

    /// <summary>The Spindle contender with the lowest median, or null; for reference only, never the headline.</summary>
    public ContenderResult? FastestSpindle => Results.Where(r => r.Contender != Contender.SystemIO).MinBy(r => r.MedianNs);

    /// <summary>
    /// Spindle Auto's time over System.IO's, below 1 meaning what a user gets from Spindle is faster: the median
    /// of the per-round ratios (the rounds in which both ran back to back), or the ratio of the medians when
    /// per-round times are missing.
    /// </summary>
    public double Ratio => Estimate.Median;

    /// <summary>
    /// <see cref="Ratio"/> with its interval and verdict, from the rounds in which both ran (from the fastest
    /// and slowest rounds when per-round times are missing).
    /// </summary>
    public RatioEstimate Estimate => _estimate ??= ComputeEstimate();

    private RatioEstimate? _estimate;   // computed once: the rounds do not change after the run

    private RatioEstimate ComputeEstimate()
    {
        if (SystemIO is not { } s || Auto is not { } a || !(s.MedianNs > 0))
        {
            return RatioEstimate.None;
        }
        if (s.RoundNs.Count > 0 && a.RoundNs.Count > 0)
        {
            return RatioEstimate.FromRounds(s.RoundNs, a.RoundNs);
        }
        double ratio = a.MedianNs / s.MedianNs;
        return new RatioEstimate(ratio, Math.Min(ratio, a.MinNs / s.MaxNs), Math.Max(ratio, a.MaxNs / s.MinNs), Math.Min(s.Rounds, a.Rounds));
    }

    /// <summary>This row's figures under another name, as the busy twin of <paramref name="quiet"/> measured beside <paramref name="neighbours"/> busy processes.</summary>
    public RowResult AsBusyTwin(string name, RowResult quiet, int neighbours) => new()
    {
        Name = name,
        Group = Group,
        IsAsync = IsAsync,
        OperationsPerInvocation = OperationsPerInvocation,
        CallsPerInvocation = CallsPerInvocation,
        InFlight = InFlight,
        RecordsLatency = RecordsLatency,
        HasFioJob = HasFioJob,
        Results = Results,
        Skipped = Skipped,
        Fio = Fio,
        FioNote = FioNote,
        BusyNeighbours = neighbours,
        QuietTwin = quiet,
    };

    /// <summary>The figure of one contender, or null when it did not run.</summary>
    public ContenderResult? For(Contender contender) => Results.FirstOrDefault(r => r.Contender == contender);
}
