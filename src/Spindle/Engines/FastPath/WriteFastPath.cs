namespace Spindle.Engines.FastPath;

/// <summary>
/// Small buffered writes to a local file system, made on the caller's thread: they are copies into the page cache, and
/// a hop or an io_uring round trip (on ext4 an io-wq worker doing the same copy) costs more. The <see cref="Router"/>
/// decides which writes qualify; <see cref="InlineExecutor"/> makes them.
/// </summary>
internal static class WriteFastPath
{
    /// <summary>The largest write done inline (<see cref="EngineTunables.MaxInlineWrite"/>).</summary>
    internal const int MaxInlineBytes = EngineTunables.MaxInlineWrite;

    /// <summary>Whether the process allows the fast path (the switch is read once).</summary>
    internal static readonly bool Enabled = !SpindleSwitches.DisableWriteFastPath;
}
