namespace Spindle.Engines;

/// <summary>
/// How many requests on handles that always finish (regular files, block devices) are in the kernel or
/// queued for it right now, process-wide, on pool threads and on the ring. The router sends a request
/// that finds none in flight to a pool thread, where it costs one thread hop (System.IO's shape), and
/// requests that overlap to the ring, whose concurrency pays for its two hops (docs/engine-v2.md).
/// </summary>
internal static class FileRequestsInFlight
{
    private static int s_count;
    private static int s_onRing;

    /// <summary>Whether no request on a file or block device is in flight now.</summary>
    internal static bool None => Volatile.Read(ref s_count) == 0;

    /// <summary>Whether any of them is on the ring now (whose completions need pool threads free to run their continuations).</summary>
    internal static bool OnRing => Volatile.Read(ref s_onRing) != 0;

    /// <summary>A request starts (before it is queued anywhere).</summary>
    internal static void Enter() => Interlocked.Increment(ref s_count);

    /// <summary>A request finished (before its continuation runs, so that a loop's next request sees it gone).</summary>
    internal static void Leave() => Interlocked.Decrement(ref s_count);

    /// <summary>A request starts on the ring (before it is queued there).</summary>
    internal static void EnterRing()
    {
        Interlocked.Increment(ref s_count);
        Interlocked.Increment(ref s_onRing);
    }

    /// <summary>A request on the ring finished.</summary>
    internal static void LeaveRing()
    {
        Interlocked.Decrement(ref s_onRing);
        Interlocked.Decrement(ref s_count);
    }

    /// <summary>Counts one request that never finishes until disposed (tests: makes every request see others in flight, so it goes to the ring).</summary>
    internal static HeldRequest Hold()
    {
        Enter();
        return default;
    }

    /// <summary>The request <see cref="Hold"/> counts; disposing it lets go.</summary>
    internal readonly struct HeldRequest : IDisposable
    {
        /// <summary>Lets go of the held request.</summary>
        public void Dispose() => Leave();
    }
}
