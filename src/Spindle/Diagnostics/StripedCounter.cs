using System.Numerics;

namespace Spindle.Diagnostics;

/// <summary>
/// A process-wide total that many threads add to on hot paths. Each processor adds to its own
/// cache line, so concurrent I/O does not bounce one shared line between cores; reading sums the
/// lines (rare: tests and diagnostics).
/// </summary>
internal sealed class StripedCounter
{
    // 8 longs = 64 bytes: one cache line per slot.
    private const int SlotStride = 8;

    private readonly long[] _slots;
    private readonly int _mask;

    internal StripedCounter()
    {
        int stripes = (int)BitOperations.RoundUpToPowerOf2((uint)Math.Max(1, Environment.ProcessorCount));
        _mask = stripes - 1;
        // One spare line in front keeps slot 0 off the array header's line.
        _slots = new long[(stripes + 1) * SlotStride];
    }

    internal void Add(long value)
        => Interlocked.Add(ref _slots[((Thread.GetCurrentProcessorId() & _mask) + 1) * SlotStride], value);

    internal long Read()
    {
        long total = 0;
        for (int i = SlotStride; i < _slots.Length; i += SlotStride)
        {
            total += Volatile.Read(ref _slots[i]);
        }
        return total;
    }
}
