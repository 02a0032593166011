using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Handles;
using Spindle.Interop;
using Spindle.Syscalls;

namespace Spindle.Engines.FastPath;

/// <summary>
/// Serves an asynchronous read from the page cache on the caller's thread with
/// <c>preadv2(RWF_NOWAIT)</c>: when the pages are cached, a copy costs less than any round trip
/// through a pool thread or a ring. When they are not, the kernel says EAGAIN at once and the
/// engine takes over.
/// </summary>
internal static unsafe class ReadFastPath
{
    /// <summary>Whether the process allows the fast path (the switch is read once).</summary>
    internal static readonly bool Enabled = !SpindleSwitches.DisableReadFastPath;

    /// <summary>
    /// Tries the read. Returns the bytes read from cached pages (possibly fewer than asked, 0 at
    /// the end of the file), or -1 when the engine must do the read: nothing cached, a handle
    /// without positions, an <c>O_DIRECT</c> handle, or any error (the engine reports errors as
    /// System.IO does). <paramref name="facts"/> are the handle's.
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
                SpindleMetrics.FastPathHit();
                SpindleMetrics.Operation(engine, IoDirection.Read, result, IoMechanism.FastPath);
                return (int)result;
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

    /// <summary>
    /// Whether a short non-blocking read of <paramref name="read"/> bytes at <paramref name="fileOffset"/>
    /// stopped at the end of the file. The page cache copies whole pages: a read that stops for want of
    /// a cached page stops at a page boundary, so one that stops inside a page stopped at the end of the
    /// file, where a blocking read would have stopped too. One that stops on a boundary may be either,
    /// and the engine finds out.
    /// </summary>
    private static bool EndsAtEndOfFile(long fileOffset, long read) => read > 0 && ((fileOffset + read) & (PageSize - 1)) != 0;

    // The granularity of the page cache (folios are whole pages).
    private static readonly long PageSize = Environment.SystemPageSize;

    /// <summary>Turns the read fast path off for one handle (<see cref="SpindleFileOptions.ReadFastPath"/> set to false).</summary>
    internal static void DisableFor(SafeFileHandle handle) => HandleFacts.Of(handle).NonBlockingReads = false;

    /// <summary>As <see cref="DisableFor(SafeFileHandle)"/> for a handle just opened, from what its open learned.</summary>
    internal static void DisableFor(SafeFileHandle handle, in OpenedFile opened) => HandleFacts.Of(handle, opened).NonBlockingReads = false;

    /// <summary>
    /// True when a read or scatter read is done from cached pages (<paramref name="completed"/> bytes). When only part of
    /// a single buffer was cached, <paramref name="request"/> becomes the rest (<see cref="FileRequest.After"/>), so that
    /// the caller still gets one full read, as from System.IO.
    /// </summary>
    internal static bool TryServe(ref FileRequest request, IoEngine engine, out long completed)
    {
        switch (request.Kind)
        {
            case RequestKind.Read:
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
                completed = 0;
                return false;
            case RequestKind.ReadScatter:
                completed = TryReadScatter(request.Handle, request.Facts, request.Destinations!, request.Offset, engine);
                return completed >= 0;
            default:
                completed = 0;
                return false;
        }
    }

    /// <summary>
    /// The fast path for one buffer: true when the read is done (<paramref name="completed"/> bytes, all asked for or up
    /// to the end of the file). When only part was cached, the buffer and offset are moved past it and
    /// <paramref name="prefix"/> says how much, so that the engine reads the rest.
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
    /// Tries a scatter read of cached pages. Returns the bytes read when every buffer was filled or the
    /// read stopped inside a page (the end of the file), or -1 when the engine must do the read (then
    /// from the start: a short result on a page boundary may be the end of the file or an uncached
    /// page, and only the engine can tell which without blocking here).
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
            if (result < 0)
            {
                return -1;
            }
            SpindleMetrics.FastPathHit();
            SpindleMetrics.Operation(engine, IoDirection.Read, result, IoMechanism.FastPath);
            return result;
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
