using System.Diagnostics;

namespace Spindle.Workloads;

/// <summary>
/// The latency of every operation of the measured batches of one contender, in <see cref="Stopwatch"/>
/// ticks, kept in an array allocated before the measurement: recording allocates nothing and costs one
/// timestamp and one interlocked increment, so workers on several threads share one recorder.
/// </summary>
public sealed class LatencyRecorder
{
    private readonly long[] _ticks;   // one latency per recorded operation, in arrival order
    private int _count;               // operations recorded; those beyond the capacity are counted but not kept

    /// <summary>Creates a recorder that keeps up to <paramref name="capacity"/> latencies.</summary>
    public LatencyRecorder(int capacity)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(capacity);
        _ticks = new long[capacity];
    }

    /// <summary>Operations recorded, kept or not.</summary>
    public int Recorded => Volatile.Read(ref _count);

    /// <summary>The latencies kept, in ticks of <see cref="Stopwatch.Frequency"/>, in arrival order.</summary>
    public Span<long> Samples => _ticks.AsSpan(0, Math.Min(Recorded, _ticks.Length));

    /// <summary>Records an operation that started at <paramref name="startTimestamp"/> (from <see cref="Stopwatch.GetTimestamp"/>) and ends now.</summary>
    public void Record(long startTimestamp)
    {
        long elapsed = Stopwatch.GetTimestamp() - startTimestamp;
        int index = Interlocked.Increment(ref _count) - 1;
        if ((uint)index < (uint)_ticks.Length)
        {
            _ticks[index] = elapsed;
        }
    }

    /// <summary>Forgets every recorded latency.</summary>
    public void Clear() => Volatile.Write(ref _count, 0);
}
