using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Interop;
using Spindle.RandomAccess;

namespace Spindle.Engines.FastPath;

/// <summary>
/// Serves an asynchronous read from the page cache on the caller's thread with
/// <c>preadv2(RWF_NOWAIT)</c>: when the pages are cached, a copy costs less than any round trip
/// through a pool thread or a ring. When they are not, the kernel says EAGAIN at once and the
/// engine takes over.
/// </summary>
internal static unsafe class ReadFastPath
{
    /// <summary>The AppContext switch that turns the fast path off for the whole process.</summary>
    internal const string DisableSwitch = "Spindle.DisableReadFastPath";

    /// <summary>Whether the process allows the fast path (the switch is read once).</summary>
    internal static readonly bool Enabled = !(AppContext.TryGetSwitch(DisableSwitch, out bool disabled) && disabled);

    // What the fast path learned about each handle; weak so that it never keeps a handle alive.
    private static readonly ConditionalWeakTable<SafeFileHandle, HandleFacts> s_facts = new();
    private static readonly ConditionalWeakTable<SafeFileHandle, HandleFacts>.CreateValueCallback s_probe = Probe;

    /// <summary>
    /// Tries the read. Returns the bytes read from cached pages (possibly fewer than asked, 0 at
    /// the end of the file), or -1 when the engine must do the read: nothing cached, a handle
    /// without positions, an <c>O_DIRECT</c> handle, or any error (the engine reports errors as
    /// System.IO does).
    /// </summary>
    internal static int TryRead(SafeFileHandle handle, Memory<byte> buffer, long fileOffset, IoEngine engine)
    {
        if (fileOffset < 0 || buffer.IsEmpty)
        {
            return -1;
        }
        HandleFacts facts = s_facts.GetValue(handle, s_probe);
        if (!facts.FastPathAllowed)
        {
            return -1;
        }

        bool added = false;
        try
        {
            handle.DangerousAddRef(ref added);
            fixed (byte* pointer = buffer.Span)
            {
                IoVector vector = new() { Base = pointer, Count = (nuint)buffer.Length };
                nint result = Libc.PReadV2(HandleIo.Fd(handle), &vector, 1, fileOffset, LinuxConstants.RWF_NOWAIT);
                if (result < 0)
                {
                    if (Errno.Last == Errno.EOPNOTSUPP)
                    {
                        // The file system does not do non-blocking reads; stop asking for this handle.
                        facts.FastPathAllowed = false;
                    }
                    return -1;
                }
                SpindleMetrics.FastPathHit();
                SpindleMetrics.Operation(engine, result);
                return (int)result;
            }
        }
        catch (ObjectDisposedException)
        {
            return -1;
        }
        finally
        {
            if (added)
            {
                handle.DangerousRelease();
            }
        }
    }

    /// <summary>
    /// The fast path as an engine uses it: true when the read is done (<paramref name="completed"/>
    /// bytes, all asked for or up to the end of the file). When only part was cached, the buffer and
    /// offset are moved past it and <paramref name="prefix"/> says how much, so that the engine reads
    /// the rest and the caller still gets one full read as from System.IO.
    /// </summary>
    internal static bool TryComplete(SafeFileHandle handle, ref Memory<byte> buffer, ref long fileOffset, IoEngine engine, out int prefix, out int completed)
    {
        prefix = 0;
        completed = TryRead(handle, buffer, fileOffset, engine);
        if (completed < 0)
        {
            return false;
        }
        if (completed == 0 || completed == buffer.Length)
        {
            return true;
        }
        prefix = completed;
        buffer = buffer.Slice(completed);
        fileOffset += completed;
        return false;
    }

    private static HandleFacts Probe(SafeFileHandle handle)
    {
        bool allowed = false;
        bool added = false;
        try
        {
            handle.DangerousAddRef(ref added);
            int fd = HandleIo.Fd(handle);
            StatxBuffer status;
            int flags = Libc.Fcntl(fd, LinuxConstants.F_GETFL, 0);
            // O_DIRECT reads with RWF_NOWAIT still wait for the device, on the caller's thread.
            allowed = flags >= 0 && (flags & OpenFlags.O_DIRECT) == 0
                && Libc.Statx(fd, string.Empty, LinuxConstants.AT_EMPTY_PATH, LinuxConstants.STATX_TYPE, &status) == 0
                && (status.Mode & LinuxConstants.S_IFMT) == LinuxConstants.S_IFREG;
        }
        catch (ObjectDisposedException)
        {
        }
        finally
        {
            if (added)
            {
                handle.DangerousRelease();
            }
        }
        return new HandleFacts { FastPathAllowed = allowed };
    }

    private sealed class HandleFacts
    {
        // A regular file without O_DIRECT on a file system that supports RWF_NOWAIT (as far as known).
        public volatile bool FastPathAllowed;
    }
}
