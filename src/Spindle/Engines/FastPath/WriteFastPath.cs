namespace Spindle.Engines.FastPath;

/// <summary>
/// Writes small buffers to cached regular files on the caller's thread. A buffered write to a local file system is a
/// copy into the page cache (Linux has no RWF_NOWAIT for buffered writes on ext4): a thread hop or an io_uring round
/// trip, which on ext4 ends in an io-wq worker doing the same copy, costs more than the copy. The <see cref="Router"/>
/// decides which writes qualify; <see cref="InlineExecutor"/> makes them.
/// </summary>
internal static class WriteFastPath
{
    /// <summary>The largest write done inline (<see cref="EngineTunables.MaxInlineWrite"/>).</summary>
    internal const int MaxInlineBytes = EngineTunables.MaxInlineWrite;

    /// <summary>Whether the process allows the fast path (the switch is read once).</summary>
    internal static readonly bool Enabled = !SpindleSwitches.DisableWriteFastPath;
}
