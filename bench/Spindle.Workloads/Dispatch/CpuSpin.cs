using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace Spindle.Workloads.Dispatch;

/// <summary>
/// The continuation's work in the dispatch matrix: a loop of integer arithmetic calibrated, on this
/// machine, to a number of iterations per microsecond of the calling thread's CPU time. It burns CPU
/// rather than waiting for the clock, so on a busy core it takes longer, as real work (parsing,
/// checksums) would; System.IO and Spindle run the very same loop.
/// </summary>
public static partial class CpuSpin
{
    private const int ClockThreadCpuTime = 3;   // CLOCK_THREAD_CPUTIME_ID
    private static ulong s_sink;                  // the loop's result goes here, so the JIT cannot drop the loop

    /// <summary>Runs <paramref name="iterations"/> rounds of the loop (nothing for 0).</summary>
    /// <remarks>Compiled optimized from the first call: a tiered method starts each call unoptimized until promoted, and the calibration would then measure two different loops.</remarks>
    [MethodImpl(MethodImplOptions.NoInlining | MethodImplOptions.AggressiveOptimization)]
    public static void Run(long iterations)
    {
        ulong x = 0x9E3779B97F4A7C15UL;
        for (long i = 0; i < iterations; i++)
        {
            // xorshift64: one dependent chain, no memory traffic, no allocation.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        if (x == 0)
        {
            s_sink = x;   // never true for a xorshift state; the read of x keeps the loop alive
        }
    }

    /// <summary>
    /// Iterations per microsecond of thread CPU time: the fastest of <paramref name="trials"/> runs of
    /// about <paramref name="trialMicroseconds"/> each, measured with <c>CLOCK_THREAD_CPUTIME_ID</c>, so
    /// time the thread spent preempted by other work on a shared machine does not count.
    /// </summary>
    /// <exception cref="PlatformNotSupportedException">The kernel has no per-thread CPU clock.</exception>
    public static double Calibrate(int trials = 7, int trialMicroseconds = 4000)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(trials);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(trialMicroseconds);
        // Find an iteration count of about the trial length, then keep the best rate of the trials.
        long iterations = 1024;
        while (ThreadCpuNanoseconds(() => Run(iterations)) < trialMicroseconds * 1000L / 4)
        {
            iterations *= 2;
        }
        double best = 0;
        for (int t = 0; t < trials; t++)
        {
            long n = iterations * 4;
            double ns = ThreadCpuNanoseconds(() => Run(n));
            best = Math.Max(best, n / Math.Max(ns / 1000, 1e-3));
        }
        return best;
    }

    /// <summary>
    /// The thread CPU time, in nanoseconds, that a spin of <paramref name="microseconds"/> at
    /// <paramref name="iterationsPerMicrosecond"/> takes: the least of three runs (the first may pay for
    /// compiling the measuring path). Close to <paramref name="microseconds"/> when the calibration holds.
    /// </summary>
    public static double Check(double microseconds, double iterationsPerMicrosecond)
    {
        long iterations = Iterations(microseconds, iterationsPerMicrosecond);
        double least = double.MaxValue;
        for (int i = 0; i < 3; i++)
        {
            least = Math.Min(least, ThreadCpuNanoseconds(() => Run(iterations)));
        }
        return least;
    }

    /// <summary>The iterations for <paramref name="microseconds"/> of CPU at <paramref name="iterationsPerMicrosecond"/>.</summary>
    public static long Iterations(double microseconds, double iterationsPerMicrosecond) =>
        microseconds <= 0 ? 0 : (long)Math.Round(microseconds * iterationsPerMicrosecond);

    /// <summary>The calling thread's CPU time spent in <paramref name="action"/>, in nanoseconds.</summary>
    /// <exception cref="PlatformNotSupportedException">The kernel has no per-thread CPU clock.</exception>
    public static double ThreadCpuNanoseconds(Action action)
    {
        ArgumentNullException.ThrowIfNull(action);
        long before = ThreadCpuNow();
        action();
        return ThreadCpuNow() - before;
    }

    private static long ThreadCpuNow()
    {
        if (ClockGetTime(ClockThreadCpuTime, out TimeSpec now) != 0)
        {
            throw new PlatformNotSupportedException("clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed: no per-thread CPU clock");
        }
        return now.Seconds * 1_000_000_000 + now.Nanoseconds;
    }

    [StructLayout(LayoutKind.Sequential)]
    private struct TimeSpec
    {
        public long Seconds;
        public long Nanoseconds;
    }

    [LibraryImport("libc", EntryPoint = "clock_gettime")]
    private static partial int ClockGetTime(int clock, out TimeSpec time);
}
