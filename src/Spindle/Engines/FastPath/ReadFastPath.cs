using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Handles;
using Spindle.Interop;
using Spindle.Syscalls;

namespace Spindle.Engines.FastPath;

/// <summary>
/// Serves an asynchronous read from the page cache on the caller's thread with <c>preadv2(RWF_NOWAIT)</c>: a copy of
/// cached pages costs less than any round trip through a pool thread or a ring; otherwise the kernel says EAGAIN at
/// once and the engine takes over.
/// </summary>
internal static unsafe class ReadFastPath
{
    /// <summary>Whether the process allows the fast path (the switch is read once).</summary>
    internal static readonly bool Enabled = !SpindleSwitches.DisableReadFastPath;

    /// <summary>
    /// The bytes read from cached pages (possibly fewer than asked, 0 at the end of the file), or -1 when the engine
    /// must do the read: nothing cached, no position, <c>O_DIRECT</c>, or any error (the engine reports it as System.IO).
    /// </summary>
    internal static int TryRead(SafeFileHandle handle, HandleFacts facts, Memory<byte> buffer, long fileOffset, IoEngine engine)
    {
        if (buffer.IsEmpty || !MayTry(handle, facts, fileOffset))
        {
            return -1;
        }
        try
        {
            fixed (byte* pointer = buffer.Span)
            {
                nint result = Libc.PReadV2(handle, pointer, (nuint)buffer.Length, fileOffset, LinuxConstants.RWF_NOWAIT);
                if (result < 0)
                {
                    if (Errno.Last == Errno.EOPNOTSUPP)
                    {
                        // The file system does not do non-blocking reads; stop asking for this handle.
                        facts.NonBlockingReads = false;
                    }
                    return -1;
                }
                return (int)Hit(result, engine);
            }
        }
        catch (ObjectDisposedException)
        {
            return -1;
        }
    }

    // A handle with positions whose reads may not block; while the fault seam is armed on it (tests only), every read
    // goes where the seam can see it.
    private static bool MayTry(SafeFileHandle handle, HandleFacts facts, long fileOffset)
        => fileOffset >= 0 && facts.NonBlockingReads && !(SyscallSeam.Enabled && SyscallSeam.IsArmed(handle));

    // A read the page cache served, counted as such.
    private static long Hit(long bytes, IoEngine engine)
    {
        SpindleMetrics.FastPathHit();
        SpindleMetrics.Operation(engine, IoDirection.Read, bytes, IoMechanism.FastPath);
        return bytes;
    }

    // Whether a short non-blocking read stopped at the end of the file. The page cache copies whole pages, so a read
    // short of a cached page stops on a page boundary: one that stops inside a page met the end of the file. One that
    // stops on a boundary may be either, and the engine finds out.
    private static bool EndsAtEndOfFile(long fileOffset, long read) => read > 0 && ((fileOffset + read) & (PageSize - 1)) != 0;

    // The granularity of the page cache (folios are whole pages).
    private static readonly long PageSize = Environment.SystemPageSize;

    /// <summary>Turns the read fast path off for a handle just opened (<see cref="SpindleFileOptions.ReadFastPath"/> set to false).</summary>
    internal static void DisableFor(SafeFileHandle handle, in OpenedFile opened) => HandleFacts.Of(handle, opened).NonBlockingReads = false;

    /// <summary>
    /// True when a read or scatter read is done from cached pages (<paramref name="completed"/> bytes). When only part of
    /// one buffer was cached, <paramref name="request"/> becomes the rest: the caller still gets one full read.
    /// </summary>
    internal static bool TryServe(ref FileRequest request, IoEngine engine, out long completed)
    {
        if (request.Kind == RequestKind.ReadScatter)
        {
            completed = TryReadScatter(request.Handle, request.Facts, request.Destinations!, request.Offset, engine);
            return completed >= 0;
        }
        completed = 0;
        if (request.Kind != RequestKind.Read)
        {
            return false;
        }
        Memory<byte> buffer = request.Destination;
        long offset = request.Offset;
        if (TryComplete(request.Handle, request.Facts, ref buffer, ref offset, engine, out int prefix, out int read))
        {
            completed = read;
            return true;
        }
        if (prefix > 0)
        {
            request = request.After(prefix);
        }
        return false;
    }

    /// <summary>
    /// One buffer: true when the read is done (<paramref name="completed"/> bytes: all, or up to the end of the file).
    /// When only part was cached, buffer and offset move past it and <paramref name="prefix"/> says how much.
    /// </summary>
    internal static bool TryComplete(SafeFileHandle handle, HandleFacts facts, ref Memory<byte> buffer, ref long fileOffset, IoEngine engine, out int prefix, out int completed)
    {
        prefix = 0;
        completed = TryRead(handle, facts, buffer, fileOffset, engine);
        if (completed < 0)
        {
            return false;
        }
        if (completed == 0 || completed == buffer.Length || EndsAtEndOfFile(fileOffset, completed))
        {
            return true;
        }
        prefix = completed;
        buffer = buffer.Slice(completed);
        fileOffset += completed;
        return false;
    }

    /// <summary>
    /// A scatter read of cached pages: the bytes read when every buffer was filled or the read stopped inside a page
    /// (the end of the file), else -1 and the engine reads it all again (a short read on a page boundary is ambiguous).
    /// </summary>
    internal static long TryReadScatter(SafeFileHandle handle, HandleFacts facts, IReadOnlyList<Memory<byte>> buffers, long fileOffset, IoEngine engine)
    {
        int count = buffers.Count;
        if (count == 0 || count > EngineTunables.MaxCachedScatterBuffers || !MayTry(handle, facts, fileOffset))
        {
            return -1;
        }
        try
        {
            var call = new NonBlockingScatterRead(handle, fileOffset);
            long result = PinnedIovecs.Call(new ScatterBuffers(buffers), count, ref call);
            return result < 0 ? -1 : Hit(result, engine);
        }
        catch (ObjectDisposedException)
        {
            return -1;
        }
    }

    // One preadv2(RWF_NOWAIT) over the pinned buffers: the bytes read when every buffer was filled or the read stopped
    // inside a page, else -1.
    private readonly struct NonBlockingScatterRead(SafeFileHandle handle, long fileOffset) : IIovecCall
    {
        public long Run(IoVector* vectors, int count)
        {
            long total = PinnedIovecs.TotalOf(vectors, count);
            if (total == 0)
            {
                return -1;
            }
            nint result = Libc.PReadV2(handle, vectors, count, fileOffset, LinuxConstants.RWF_NOWAIT);
            return result < 0 || result != total && !EndsAtEndOfFile(fileOffset, result) ? -1 : result;
        }
    }
}
