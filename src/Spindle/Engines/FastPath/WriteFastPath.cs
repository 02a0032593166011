using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Handles;
using Spindle.RandomAccess;

namespace Spindle.Engines.FastPath;

/// <summary>
/// Writes small buffers to cached regular files on the caller's thread. A buffered write to a local
/// file system is a copy into the page cache (Linux has no RWF_NOWAIT for buffered writes on ext4):
/// a thread hop or an io_uring round trip, which on ext4 ends in an io-wq worker doing the same
/// copy, costs several times more than the copy itself.
/// </summary>
internal static class WriteFastPath
{
    /// <summary>The AppContext switch that turns the write fast path off for the whole process.</summary>
    internal const string DisableSwitch = SpindleSwitches.DisableWriteFastPathName;

    /// <summary>The largest write done inline; beyond it the copy costs more than a hop.</summary>
    internal const int MaxInlineBytes = 64 * 1024;

    /// <summary>Whether the process allows the fast path (the switch is read once).</summary>
    internal static readonly bool Enabled = !SpindleSwitches.DisableWriteFastPath;

    /// <summary>Whether this write should be done inline.</summary>
    internal static bool Applies(SafeFileHandle handle, int length, long fileOffset)
        => Enabled && fileOffset >= 0 && length <= MaxInlineBytes && HandleFacts.Of(handle).CachedWrites;

    /// <summary>As <see cref="Applies(SafeFileHandle, int, long)"/>, for a caller that has the handle's facts already.</summary>
    internal static bool Applies(HandleFacts facts, int length, long fileOffset)
        => Enabled && fileOffset >= 0 && length <= MaxInlineBytes && facts.CachedWrites;

    /// <summary>The write, done now; errors come back in the task as from the engine.</summary>
    internal static ValueTask Write(SafeFileHandle handle, ReadOnlySpan<byte> buffer, long fileOffset, IoEngine engine)
    {
        bool added = false;
        try
        {
            handle.DangerousAddRef(ref added);
            PositionalIo.Write(HandleIo.Fd(handle), buffer, fileOffset, SafeFileHandleInternals.GetPath(handle));
            SpindleMetrics.InlineWrite();
            SpindleMetrics.Operation(engine, IoDirection.Write, buffer.Length, IoMechanism.FastPath);
            return default;
        }
        catch (Exception e)
        {
            return ValueTask.FromException(e);
        }
        finally
        {
            if (added)
            {
                handle.DangerousRelease();
            }
        }
    }

    /// <summary>Whether this gather write should be done inline (small total, cached local file).</summary>
    internal static bool Applies(SafeFileHandle handle, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset)
        => Enabled && fileOffset >= 0 && FitsInline(buffers) && HandleFacts.Of(handle).CachedWrites;

    /// <summary>As <see cref="Applies(SafeFileHandle, IReadOnlyList{ReadOnlyMemory{byte}}, long)"/>, for a caller that has the handle's facts already.</summary>
    internal static bool Applies(HandleFacts facts, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset)
        => Enabled && fileOffset >= 0 && FitsInline(buffers) && facts.CachedWrites;

    private static bool FitsInline(IReadOnlyList<ReadOnlyMemory<byte>> buffers)
    {
        long total = 0;
        for (int i = 0; i < buffers.Count; i++)
        {
            total += buffers[i].Length;
            if (total > MaxInlineBytes)
            {
                return false;
            }
        }
        return true;
    }

    /// <summary>The gather write, done now; errors come back in the task as from the engine.</summary>
    internal static ValueTask WriteGather(SafeFileHandle handle, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset, IoEngine engine)
    {
        bool added = false;
        try
        {
            handle.DangerousAddRef(ref added);
            PositionalIo.WriteGather(HandleIo.Fd(handle), buffers, fileOffset, SafeFileHandleInternals.GetPath(handle));
            SpindleMetrics.InlineWrite();
            SpindleMetrics.Operation(engine, IoDirection.Write, 0, IoMechanism.FastPath);
            return default;
        }
        catch (Exception e)
        {
            return ValueTask.FromException(e);
        }
        finally
        {
            if (added)
            {
                handle.DangerousRelease();
            }
        }
    }
}
