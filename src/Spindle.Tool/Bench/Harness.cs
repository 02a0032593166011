using System.Runtime.CompilerServices;
using System.Diagnostics;
using Spindle.Workloads;

namespace Spindle.Tool.Bench;

/// <summary>
/// The tool's own measurement loop: every contender of a row warms up until its time per invocation
/// settles (a pilot stage that also sizes the batches), then runs in rounds, System.IO and Spindle (and
/// fio, when the row has a job) interleaved, the order rotating each round, so drift on a shared machine
/// hits all alike. A stability stage follows: while the interval of Auto / System.IO still crosses an
/// edge of the tie band (<see cref="RatioEstimate.Unsettled"/>), System.IO and Auto run more paired
/// rounds, up to <see cref="HarnessSettings.MaxRounds"/> and within the time the caller allows.
/// Each round's batch is timed with <see cref="Stopwatch"/>, its allocations counted with
/// <see cref="GC.GetTotalAllocatedBytes(bool)"/> and its process CPU time read with <c>getrusage</c>; the
/// result is the median, min and max per operation. Rows that record latencies get every operation's
/// latency of every measured round in an array allocated before the rounds, and their p50 and p99.
/// </summary>
public static class Harness
{
    private const int MaxInvocationsPerBatch = 100_000;
    private const int MinimumRounds = 7;   // never fewer, whatever the time: a median and an interval need them
    private const int MaxLatencySamples = 1 << 21;   // per contender and row: 16 MiB of ticks at most

    private static readonly RingEnters s_enters = new();   // for the whole process: the meter is Spindle's, one per process

    /// <summary>
    /// Measures a row that is set up. <paramref name="outsider"/>, when given, takes a turn in every
    /// round's rotation beside the contenders (fio: <see cref="FioRounds"/>).
    /// </summary>
    public static async Task<IReadOnlyList<ContenderResult>> MeasureAsync(Workload row, HarnessSettings settings, CancellationToken cancellation,
        Func<CancellationToken, Task>? outsider = null, TimeSpan? stabilityTime = null, TimeSpan? roundsTime = null)
    {
        IReadOnlyList<Contender> contenders = row.Contenders;
        var batch = new int[contenders.Count];
        double roundNs = 0;
        for (int i = 0; i < contenders.Count; i++)
        {
            double invocationNs = await WarmUpAsync(row, contenders[i], settings, cancellation).ConfigureAwait(false);
            batch[i] = BatchSize(settings, invocationNs);
            roundNs += batch[i] * invocationNs;
        }
        // A row whose single call outlasts a round (a large file on a busy machine) gets fewer rounds, never under
        // MinimumRounds, so that the run keeps its time budget.
        if (roundsTime is { } planned && roundNs > 0)
        {
            int affordable = (int)(planned.TotalNanoseconds / roundNs);
            settings = settings with { Rounds = Math.Clamp(affordable, Math.Min(MinimumRounds, settings.Rounds), settings.Rounds) };
        }

        var times = new List<double>[contenders.Count];
        var allocations = new double[contenders.Count][];
        var cpu = new double[contenders.Count][];
        var switches = new double[contenders.Count][];
        var enters = new double[contenders.Count][];
        var latencies = new LatencyRecorder?[contenders.Count];
        for (int i = 0; i < contenders.Count; i++)
        {
            times[i] = new List<double>(settings.MaxRounds);
            allocations[i] = new double[settings.Rounds];
            cpu[i] = new double[settings.Rounds];
            switches[i] = new double[settings.Rounds];
            enters[i] = new double[settings.Rounds];
            if (row.RecordsLatency)
            {
                long operations = (long)batch[i] * row.OperationsPerInvocation * settings.Rounds;
                latencies[i] = new LatencyRecorder((int)Math.Min(operations, MaxLatencySamples));
            }
        }
        try
        {
            int turns = contenders.Count + (outsider is null ? 0 : 1);
            // The outsider (fio, a second or so per turn) takes its turn in OutsiderRounds of the rounds, spread evenly.
            int stride = Math.Max(1, settings.Rounds / Math.Max(1, settings.OutsiderRounds));
            for (int round = 0; round < settings.Rounds; round++)
            {
                for (int k = 0; k < turns; k++)
                {
                    cancellation.ThrowIfCancellationRequested();
                    int i = (k + round) % turns;
                    if (i == contenders.Count)
                    {
                        if (round % stride == 0 && round / stride < settings.OutsiderRounds)
                        {
                            await outsider!(cancellation).ConfigureAwait(false);
                        }
                        continue;
                    }
                    row.Latencies = latencies[i];
                    BatchFigures figures = await RunCleanBatchAsync(row, contenders[i], batch[i], settings.RetryPreempted).ConfigureAwait(false);
                    row.Latencies = null;
                    double operations = (double)batch[i] * row.OperationsPerInvocation;
                    times[i].Add(figures.Ns / operations);
                    allocations[i][round] = figures.Bytes / operations;
                    cpu[i][round] = figures.CpuNs / operations;
                    switches[i][round] = figures.Switches / operations;
                    enters[i][round] = figures.Enters / operations;
                }
            }
        }
        finally
        {
            row.Latencies = null;
        }
        await StabilizeAsync(row, settings, batch, times, stabilityTime ?? settings.StabilityTime, cancellation).ConfigureAwait(false);

        var results = new ContenderResult[contenders.Count];
        for (int i = 0; i < contenders.Count; i++)
        {
            (double p50, double p99, double worst, int samples) = LatencyFigures(latencies[i]);
            double[] rounds = times[i].ToArray();
            results[i] = new ContenderResult(contenders[i], Median(rounds), rounds.Min(), rounds.Max(),
                Median(allocations[i]), rounds.Length, batch[i])
            {
                RoundNs = rounds,
                CpuNsPerOperation = Median(cpu[i]),
                ContextSwitchesPerOperation = Median(switches[i]),
                RingEntersPerOperation = Median(enters[i]),
                P50Ns = p50,
                P99Ns = p99,
                WorstNs = worst,
                LatencySamples = samples,
            };
        }
        return results;
    }

    // Sorted after the rounds, so the ordering costs nothing inside a measured batch.
    private static (double P50, double P99, double Worst, int Samples) LatencyFigures(LatencyRecorder? recorder)
    {
        if (recorder is null)
        {
            return (double.NaN, double.NaN, double.NaN, 0);
        }
        Span<long> samples = recorder.Samples;
        samples.Sort();
        return (Percentiles.Nanoseconds(samples, 50), Percentiles.Nanoseconds(samples, 99), Percentiles.Nanoseconds(samples, 100), samples.Length);
    }

    // The stability stage: paired rounds of System.IO and Auto (order alternating) while the ratio's
    // interval crosses an edge of the tie band. Allocations, CPU and latencies come from the base rounds.
    private static async Task StabilizeAsync(Workload row, HarnessSettings settings, int[] batch, List<double>[] times, TimeSpan allowed,
        CancellationToken cancellation)
    {
        int s = IndexOf(row.Contenders, Contender.SystemIO), a = IndexOf(row.Contenders, Contender.SpindleAuto);
        if (s < 0 || a < 0)
        {
            return;
        }
        long start = Stopwatch.GetTimestamp();
        while (times[a].Count < settings.MaxRounds && Stopwatch.GetElapsedTime(start) < allowed
            && RatioEstimate.FromRounds(times[s], times[a]).Unsettled)
        {
            bool systemFirst = times[a].Count % 2 == 0;
            foreach (int i in systemFirst ? [s, a] : new[] { a, s })
            {
                cancellation.ThrowIfCancellationRequested();
                BatchFigures figures = await RunCleanBatchAsync(row, row.Contenders[i], batch[i], settings.RetryPreempted).ConfigureAwait(false);
                times[i].Add(figures.Ns / ((double)batch[i] * row.OperationsPerInvocation));
            }
        }
    }

    private static int IndexOf(IReadOnlyList<Contender> contenders, Contender contender)
    {
        for (int i = 0; i < contenders.Count; i++)
        {
            if (contenders[i] == contender)
            {
                return i;
            }
        }
        return -1;
    }

    private static int BatchSize(HarnessSettings settings, double invocationNs) =>
        (int)Math.Clamp(Math.Ceiling(settings.RoundTime.TotalNanoseconds / Math.Max(invocationNs, 1)), 1, MaxInvocationsPerBatch);

    // The pilot stage: runs batches of about a round's length until the warm-up time has passed, two
    // batches in a row agree within 5 % per invocation and the JIT compiled nothing during the last batch
    // (page cache, pools and the tier-1 recompilations have settled: code still at tier 0 can run steadily),
    // or four times the warm-up time has passed; returns the last batch's time per invocation.
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private static async ValueTask<double> WarmUpAsync(Workload row, Contender contender, HarnessSettings settings, CancellationToken cancellation)
    {
        long start = Stopwatch.GetTimestamp();
        double previous = double.NaN, last = 0;
        int invocations = 1, batches = 0;
        while (true)
        {
            cancellation.ThrowIfCancellationRequested();
            long compiled = System.Runtime.JitInfo.GetCompiledMethodCount();
            long t0 = Stopwatch.GetTimestamp();
            for (int n = 0; n < invocations; n++)
            {
                await row.RunAsync(contender).ConfigureAwait(false);
            }
            last = Stopwatch.GetElapsedTime(t0).TotalNanoseconds / invocations;
            batches++;
            TimeSpan elapsed = Stopwatch.GetElapsedTime(start);
            bool settled = batches >= 3 && Math.Abs(last - previous) <= 0.05 * previous
                && System.Runtime.JitInfo.GetCompiledMethodCount() == compiled;
            if ((elapsed >= settings.WarmupTime && settled) || (elapsed >= 4 * settings.WarmupTime && batches >= 2))
            {
                return last;
            }
            previous = last;
            invocations = BatchSize(settings, last);
        }
    }

    // On a shared machine a batch during which the scheduler switched a thread of ours out for other work
    // measures that work, not the row: such a batch runs again, up to PreemptedRetries times (the last counts).
    // Only short batches: one that outlasts a few time slices is preempted whatever happens, and repeating it
    // would only multiply the run's time.
    private const int PreemptedRetries = 4;
    private const double RetryBelowNs = 5e6;

    // Longer than a .NET pool thread spins for work before it sleeps (about a millisecond at most).
    private const int SettleMilliseconds = 2;

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private static async ValueTask<BatchFigures> RunCleanBatchAsync(Workload row, Contender contender, int invocations, bool retry)
    {
        for (int attempt = 0; ; attempt++)
        {
            // The previous batch's aftermath (pool threads spinning for work after its last call, which System.IO's
            // pool hops leave more of) dies down first, so that no contender is charged for the one before it.
            Thread.Sleep(SettleMilliseconds);
            long before = ProcessCpu.InvoluntarySwitches();
            BatchFigures result = await RunBatchAsync(row, contender, invocations).ConfigureAwait(false);
            long after = ProcessCpu.InvoluntarySwitches();
            if (!retry || after == before || before < 0 || attempt == PreemptedRetries || result.Ns > RetryBelowNs)
            {
                return result;
            }
        }
    }

    // Pooled, so that the batch's own state machine is not counted in the row's allocations.
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private static async ValueTask<BatchFigures> RunBatchAsync(Workload row, Contender contender, int invocations)
    {
        // The enters are read outside the allocation window: reading the meter's counter allocates its measurement.
        long entersBefore = s_enters.Read();
        long switchesBefore = ProcessCpu.ContextSwitches();
        long cpuBefore = ProcessCpu.Nanoseconds();
        long allocatedBefore = GC.GetTotalAllocatedBytes(precise: true);
        long start = Stopwatch.GetTimestamp();
        for (int n = 0; n < invocations; n++)
        {
            await row.RunAsync(contender).ConfigureAwait(false);
        }
        double ns = Stopwatch.GetElapsedTime(start).TotalNanoseconds;
        long allocated = GC.GetTotalAllocatedBytes(precise: true) - allocatedBefore;
        long cpuAfter = ProcessCpu.Nanoseconds();
        long switchesAfter = ProcessCpu.ContextSwitches();
        long entersAfter = s_enters.Read();
        return new BatchFigures(ns, allocated,
            cpuBefore < 0 || cpuAfter < 0 ? double.NaN : cpuAfter - cpuBefore,
            switchesBefore < 0 || switchesAfter < 0 ? double.NaN : switchesAfter - switchesBefore,
            entersBefore < 0 || entersAfter < 0 ? double.NaN : entersAfter - entersBefore);
    }

    // What one measured batch cost, in total: wall time, bytes allocated, process CPU time, context switches of
    // the process's threads and Spindle's io_uring_enter calls (NaN where the kernel or the meter gave no figure).
    private readonly record struct BatchFigures(double Ns, double Bytes, double CpuNs, double Switches, double Enters);

    /// <summary>The median of <paramref name="values"/>; NaN when any is NaN (a figure the kernel did not give).</summary>
    public static double Median(IReadOnlyList<double> values)
    {
        if (values.Count == 0 || values.Any(double.IsNaN))
        {
            return double.NaN;
        }
        double[] sorted = values.ToArray();
        Array.Sort(sorted);
        int mid = sorted.Length / 2;
        return sorted.Length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    }
}
