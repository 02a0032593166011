using System.Runtime.CompilerServices;
using System.Diagnostics;
using Spindle.Benchmarks.Workloads;

namespace Spindle.Tool.Bench;

/// <summary>
/// The tool's own measurement loop: every contender of a row warms up, then runs in rounds, System.IO
/// and Spindle interleaved (the order rotates each round) so drift on a shared machine hits all alike.
/// Each round's batch is timed with <see cref="Stopwatch"/> and its allocations counted with
/// <see cref="GC.GetTotalAllocatedBytes(bool)"/>; the result is the median, min and max per operation.
/// </summary>
public static class Harness
{
    private const int MaxInvocationsPerBatch = 100_000;

    /// <summary>Measures a row that is set up.</summary>
    public static async Task<IReadOnlyList<ContenderResult>> MeasureAsync(Workload row, HarnessSettings settings, CancellationToken cancellation)
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
        for (int i = 0; i < contenders.Count; i++)
        {
            times[i] = new double[settings.Rounds];
            allocations[i] = new double[settings.Rounds];
        }
        for (int round = 0; round < settings.Rounds; round++)
        {
            for (int k = 0; k < contenders.Count; k++)
            {
                cancellation.ThrowIfCancellationRequested();
                int i = (k + round) % contenders.Count;
                (double ns, double bytes) = await RunBatchAsync(row, contenders[i], batch[i]).ConfigureAwait(false);
                double operations = (double)batch[i] * row.OperationsPerInvocation;
                times[i][round] = ns / operations;
                allocations[i][round] = bytes / operations;
            }
        }

        var results = new ContenderResult[contenders.Count];
        for (int i = 0; i < contenders.Count; i++)
        {
            results[i] = new ContenderResult(contenders[i], Median(times[i]), times[i].Min(), times[i].Max(),
                Median(allocations[i]), settings.Rounds, batch[i]);
        }
        return results;
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
    private static async ValueTask<(double Ns, double Bytes)> RunBatchAsync(Workload row, Contender contender, int invocations)
    {
        long allocatedBefore = GC.GetTotalAllocatedBytes(precise: true);
        long start = Stopwatch.GetTimestamp();
        for (int n = 0; n < invocations; n++)
        {
            await row.RunAsync(contender).ConfigureAwait(false);
        }
        double ns = Stopwatch.GetElapsedTime(start).TotalNanoseconds;
        long allocated = GC.GetTotalAllocatedBytes(precise: true) - allocatedBefore;
        return (ns, allocated);
    }

    private static double Median(double[] values)
    {
        double[] sorted = (double[])values.Clone();
        Array.Sort(sorted);
        int mid = sorted.Length / 2;
        return sorted.Length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    }
}
