namespace Spindle.Engines;

/// <summary>
/// How many requests on regular files and block devices are in the kernel or queued for it, process-wide. A data sync
/// or durable write that finds none goes to a pool thread (one hop), overlapping ones to the ring (rows 11 and 12).
/// </summary>
internal static class FileRequestsInFlight
{
    private static int s_count;

    /// <summary>Whether no request on a file or block device is in flight now.</summary>
    internal static bool None => Volatile.Read(ref s_count) == 0;

    /// <summary>A request starts, on a pool thread or the ring (before it is queued anywhere).</summary>
    internal static void Enter() => Interlocked.Increment(ref s_count);

    /// <summary>A request finished (before its continuation runs, so that a loop's next request sees it gone).</summary>
    internal static void Leave() => Interlocked.Decrement(ref s_count);
}
