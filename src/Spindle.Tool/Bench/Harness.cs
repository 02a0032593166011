using System.Runtime.CompilerServices;
using System.Diagnostics;
using Spindle.Workloads;

namespace Spindle.Tool.Bench;

/// <summary>
/// The tool's own measurement loop: every contender of a row warms up, then runs in rounds, System.IO
/// and Spindle (and fio, when the row has a job) interleaved, the order rotating each round, so drift on
/// a shared machine hits all alike.
/// Each round's batch is timed with <see cref="Stopwatch"/>, its allocations counted with
/// <see cref="GC.GetTotalAllocatedBytes(bool)"/> and its process CPU time read with <c>getrusage</c>; the
/// result is the median, min and max per operation. Rows that record latencies get every operation's
/// latency of every measured round in an array allocated before the rounds, and their p50 and p99.
/// </summary>
public static class Harness
{
    private const int MaxInvocationsPerBatch = 100_000;
    private const int MaxLatencySamples = 1 << 21;   // per contender and row: 16 MiB of ticks at most

    /// <summary>
    /// Measures a row that is set up. <paramref name="outsider"/>, when given, takes a turn in every
    /// round's rotation beside the contenders (fio: <see cref="FioRounds"/>).
    /// </summary>
    public static async Task<IReadOnlyList<ContenderResult>> MeasureAsync(Workload row, HarnessSettings settings, CancellationToken cancellation,
        Func<CancellationToken, Task>? outsider = null)
    {
        IReadOnlyList<Contender> contenders = row.Contenders;
        var batch = new int[contenders.Count];
        for (int i = 0; i < contenders.Count; i++)
        {
            double invocationNs = await WarmUpAsync(row, contenders[i], settings.WarmupTime, cancellation).ConfigureAwait(false);
            batch[i] = (int)Math.Clamp(Math.Ceiling(settings.RoundTime.TotalNanoseconds / Math.Max(invocationNs, 1)), 1, MaxInvocationsPerBatch);
        }

        var times = new double[contenders.Count][];
        var allocations = new double[contenders.Count][];
        var cpu = new double[contenders.Count][];
        var latencies = new LatencyRecorder?[contenders.Count];
        for (int i = 0; i < contenders.Count; i++)
        {
            times[i] = new double[settings.Rounds];
            allocations[i] = new double[settings.Rounds];
            cpu[i] = new double[settings.Rounds];
            if (row.RecordsLatency)
            {
                long operations = (long)batch[i] * row.OperationsPerInvocation * settings.Rounds;
                latencies[i] = new LatencyRecorder((int)Math.Min(operations, MaxLatencySamples));
            }
        }
        try
        {
            int turns = contenders.Count + (outsider is null ? 0 : 1);
            for (int round = 0; round < settings.Rounds; round++)
            {
                for (int k = 0; k < turns; k++)
                {
                    cancellation.ThrowIfCancellationRequested();
                    int i = (k + round) % turns;
                    if (i == contenders.Count)
                    {
                        await outsider!(cancellation).ConfigureAwait(false);
                        continue;
                    }
                    row.Latencies = latencies[i];
                    (double ns, double bytes, double cpuNs) = await RunBatchAsync(row, contenders[i], batch[i]).ConfigureAwait(false);
                    row.Latencies = null;
                    double operations = (double)batch[i] * row.OperationsPerInvocation;
                    times[i][round] = ns / operations;
                    allocations[i][round] = bytes / operations;
                    cpu[i][round] = cpuNs / operations;
                }
            }
        }
        finally
        {
            row.Latencies = null;
        }

        var results = new ContenderResult[contenders.Count];
        for (int i = 0; i < contenders.Count; i++)
        {
            (double p50, double p99, int samples) = LatencyFigures(latencies[i]);
            results[i] = new ContenderResult(contenders[i], Median(times[i]), times[i].Min(), times[i].Max(),
                Median(allocations[i]), settings.Rounds, batch[i])
            {
                CpuNsPerOperation = Median(cpu[i]),
                P50Ns = p50,
                P99Ns = p99,
                LatencySamples = samples,
            };
        }
        return results;
    }

    // Sorted after the rounds, so the ordering costs nothing inside a measured batch.
    private static (double P50, double P99, int Samples) LatencyFigures(LatencyRecorder? recorder)
    {
        if (recorder is null)
        {
            return (double.NaN, double.NaN, 0);
        }
        Span<long> samples = recorder.Samples;
        samples.Sort();
        return (Percentiles.Nanoseconds(samples, 50), Percentiles.Nanoseconds(samples, 99), samples.Length);
    }

    // Runs until the warm-up time has passed (at least twice) and returns the last invocation's time.
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private static async ValueTask<double> WarmUpAsync(Workload row, Contender contender, TimeSpan warmup, CancellationToken cancellation)
    {
        long start = Stopwatch.GetTimestamp();
        double last = 0;
        int runs = 0;
        while (runs < 2 || Stopwatch.GetElapsedTime(start) < warmup)
        {
            cancellation.ThrowIfCancellationRequested();
            long t0 = Stopwatch.GetTimestamp();
            await row.RunAsync(contender).ConfigureAwait(false);
            last = Stopwatch.GetElapsedTime(t0).TotalNanoseconds;
            runs++;
        }
        return last;
    }

    // Pooled, so that the batch's own state machine is not counted in the row's allocations.
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private static async ValueTask<(double Ns, double Bytes, double CpuNs)> RunBatchAsync(Workload row, Contender contender, int invocations)
    {
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
        double cpuNs = cpuBefore < 0 || cpuAfter < 0 ? double.NaN : cpuAfter - cpuBefore;
        return (ns, allocated, cpuNs);
    }

    /// <summary>The median of <paramref name="values"/>; NaN when any is NaN (a figure the kernel did not give).</summary>
    public static double Median(double[] values)
    {
        if (values.Any(double.IsNaN))
        {
            return double.NaN;
        }
        double[] sorted = (double[])values.Clone();
        Array.Sort(sorted);
        int mid = sorted.Length / 2;
        return sorted.Length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    }
}
