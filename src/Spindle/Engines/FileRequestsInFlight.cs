namespace Spindle.Engines;

/// <summary>
/// How many requests on handles that always finish (regular files, block devices) are in the kernel or queued for
/// it right now, process-wide, on pool threads and on the ring; how many operations of any kind the ring holds; and
/// whether more than a few file requests were in flight lately. The router sends a request that finds few in flight
/// to a pool thread, where it costs one thread hop (System.IO's shape), and requests that crowd in to the ring, whose
/// concurrency pays for its two hops (docs/engine-v2.md, rows 9 and 9b).
/// </summary>
internal static class FileRequestsInFlight
{
    // Two at a time need no more pool threads than the pool keeps from the start (one per core).
    private static readonly int s_few = Math.Min(2, Environment.ProcessorCount);
    // How long a crowd is remembered: a load that stepped up to more than a few stays on the ring while it lasts,
    // instead of sending a request to a pool thread whenever the count dips between two completions.
    private const long CrowdMemoryMilliseconds = 100;

    private static int s_count;
    private static int s_onRing;
    private static long s_crowdedAt = long.MinValue / 2; // Environment.TickCount64 when more than a few were last in flight

    /// <summary>Whether the ring holds any operation now (each completion needs a pool thread free to run its continuation).</summary>
    internal static bool OnRing => Volatile.Read(ref s_onRing) != 0;

    /// <summary>
    /// Whether so few requests are in flight that the ring's concurrency gains nothing over pool threads: none; or, on
    /// two cores or more, one on a pool thread, while the ring holds nothing (a pool thread waiting in a call would hold
    /// back its continuations) and no more than two were in flight in the last 100 ms.
    /// </summary>
    internal static bool Few
    {
        get
        {
            int count = Volatile.Read(ref s_count);
            return count == 0 || IsFew(count, s_few, OnRing, Environment.TickCount64, Volatile.Read(ref s_crowdedAt));
        }
    }

    /// <summary>The rule of <see cref="Few"/> for <paramref name="count"/> requests in flight (times in milliseconds).</summary>
    internal static bool IsFew(int count, int few, bool onRing, long now, long crowdedAt)
        => count == 0 || (count < few && !onRing && now - crowdedAt > CrowdMemoryMilliseconds);

    /// <summary>A request starts on a pool thread (before it is queued anywhere).</summary>
    internal static void Enter() => Count(Interlocked.Increment(ref s_count));

    /// <summary>A request on a pool thread finished (before its continuation runs, so that a loop's next request sees it gone).</summary>
    internal static void Leave() => Interlocked.Decrement(ref s_count);

    /// <summary>An operation starts on the ring (before it is queued there); <paramref name="fileRequest"/>: on a file or block device.</summary>
    internal static void EnterRing(bool fileRequest)
    {
        Interlocked.Increment(ref s_onRing);
        if (fileRequest)
        {
            Count(Interlocked.Increment(ref s_count));
        }
    }

    /// <summary>An operation on the ring finished.</summary>
    internal static void LeaveRing(bool fileRequest)
    {
        if (fileRequest)
        {
            Interlocked.Decrement(ref s_count);
        }
        Interlocked.Decrement(ref s_onRing);
    }

    private static void Count(int count)
    {
        if (count > s_few)
        {
            long now = Environment.TickCount64;
            if (Volatile.Read(ref s_crowdedAt) != now)
            {
                Volatile.Write(ref s_crowdedAt, now); // at most one write per millisecond from a crowd
            }
        }
    }

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
