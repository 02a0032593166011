namespace Spindle.Engines;

/// <summary>
/// How many requests on handles that always finish (regular files, block devices) are in the kernel or
/// queued for it right now, process-wide, on pool threads and on the ring, and whether there were more than a
/// few lately. The router sends a request that finds few in flight to a pool thread, where it costs one thread
/// hop (System.IO's shape), and requests that crowd in to the ring, whose concurrency pays for its two hops
/// (docs/engine-v2.md, row 9).
/// </summary>
internal static class FileRequestsInFlight
{
    // One or two requests at a time: as many pool threads as that exist from the start (the pool keeps one per core),
    // so each waits in its call at once; the ring's hops cost more than its concurrency gains (row 9).
    private static readonly int s_few = Math.Min(2, Environment.ProcessorCount);
    // How long a crowd is remembered: a load that stepped up to more than a few stays on the ring while it lasts,
    // instead of moving its requests to pool threads whenever the count dips between two of them.
    private const long CrowdMemoryMilliseconds = 100;

    private static int s_count;
    private static long s_crowdedAt = long.MinValue / 2; // Environment.TickCount64 when more than a few were last in flight

    /// <summary>
    /// Whether so few requests are in flight, now and lately, that the ring's concurrency gains nothing: none, or
    /// (on two cores or more) one while no more than two were in flight in the last 100 ms.
    /// </summary>
    internal static bool Few
    {
        get
        {
            int count = Volatile.Read(ref s_count);
            return count == 0 || IsFew(count, s_few, Environment.TickCount64, Volatile.Read(ref s_crowdedAt));
        }
    }

    /// <summary>The rule of <see cref="Few"/>: <paramref name="count"/> in flight, at most <paramref name="few"/> - 1 allowed besides the new one, no crowd since <paramref name="crowdedAt"/> (milliseconds).</summary>
    internal static bool IsFew(int count, int few, long now, long crowdedAt)
        => count == 0 || (count < few && now - crowdedAt > CrowdMemoryMilliseconds);

    /// <summary>A request starts (before it is queued anywhere).</summary>
    internal static void Enter()
    {
        if (Interlocked.Increment(ref s_count) > s_few)
        {
            long now = Environment.TickCount64;
            if (Volatile.Read(ref s_crowdedAt) != now)
            {
                Volatile.Write(ref s_crowdedAt, now); // at most one write per millisecond from a crowd
            }
        }
    }

    /// <summary>A request finished (before its continuation runs, so that a loop's next request sees it gone).</summary>
    internal static void Leave() => Interlocked.Decrement(ref s_count);

    /// <summary>Counts requests that never finish until disposed (tests: makes every request see a crowd, so it goes to the ring).</summary>
    internal static HeldRequest Hold()
    {
        for (int i = 0; i < s_few; i++)
        {
            Enter();
        }
        return default;
    }

    /// <summary>The requests <see cref="Hold"/> counts; disposing it lets go.</summary>
    internal readonly struct HeldRequest : IDisposable
    {
        /// <summary>Lets go of the held requests.</summary>
        public void Dispose()
        {
            for (int i = 0; i < s_few; i++)
            {
                Leave();
            }
        }
    }
}
