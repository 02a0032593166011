using System.Diagnostics;

namespace Spindle.Tool.Bench;

/// <summary>Latency percentiles of recorded operations, by the nearest-rank method (the value below which p % of the samples fall).</summary>
public static class Percentiles
{
    /// <summary>
    /// The <paramref name="percent"/> percentile of <paramref name="sortedTicks"/> (ascending <see cref="Stopwatch"/>
    /// ticks) in nanoseconds, or NaN when there is no sample.
    /// </summary>
    public static double Nanoseconds(ReadOnlySpan<long> sortedTicks, double percent)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(percent);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(percent, 100);
        if (sortedTicks.IsEmpty)
        {
            return double.NaN;
        }
        // Nearest rank: the smallest sample with at least p % of the samples at or below it.
        int rank = (int)Math.Ceiling(percent / 100 * sortedTicks.Length);
        long ticks = sortedTicks[Math.Clamp(rank - 1, 0, sortedTicks.Length - 1)];
        return ticks * 1e9 / Stopwatch.Frequency;
    }
}
