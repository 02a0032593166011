using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Engines.ThreadPool;
using Spindle.Handles;
using Spindle.Interop;

namespace Spindle.Engines.IoUring;

/// <summary>The io_uring engine's open: the ring's <c>openat</c> between the synchronous open's steps before and after it (<see cref="FileOpener"/>).</summary>
internal static class RingOpen
{
    /// <summary>
    /// <c>openat</c> as an SQE (the path lookup, which may read the disk, is what the ring takes off the thread), then the
    /// synchronous open's steps after it (<see cref="FileOpener.Finish"/>), and the ring's <c>close</c> when they fail.
    /// </summary>
    /// <remarks>
    /// An open without waiting opens a FIFO's read end at once and fails its write end with ENXIO, where <c>open(2)</c>
    /// waits for the other end: a read end is kept and waited on for a writer (<see cref="FifoWriterWait"/>); a write end
    /// and character devices are opened again the blocking way, on a thread of their own.
    /// </remarks>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    internal static async ValueTask<OpenedHandle> OpenAsync(IoUringEngine ring, OpenRequest request, bool tryCached, CancellationToken cancellationToken)
    {
        // The lookup cache first: a warm open completes here. A content call's read-only handle keeps that open's
        // O_NONBLOCK until it does more than read the page cache: one fcntl fewer (OpenedHandle.PendingStatusFlags).
        bool keepNonBlocking = tryCached && request.ForOneCall && (request.Access & FileAccess.Write) == 0 && (request.Flags & OpenFlags.O_NONBLOCK) == 0;
        int result = tryCached ? TryOpenCached(request, keepNonBlocking) : -Errno.EAGAIN;
        bool nonBlocking = keepNonBlocking && result >= 0;
        bool triedWithoutWaiting = (request.Flags & (OpenFlags.O_CREAT | OpenFlags.O_TRUNC)) == 0;
        if (result == -Errno.EAGAIN)
        {
            result = await OpenOnRingAsync(ring, request, triedWithoutWaiting, cancellationToken).ConfigureAwait(false);
        }
        while (true)
        {
            if (result == -Errno.ENXIO && triedWithoutWaiting)
            {
                return await OpenBlockingAsync(request, cancellationToken).ConfigureAwait(false);
            }
            request.MayNotHaveWaited = triedWithoutWaiting;
            int fd = FileOpener.Opened(ref request, result);
            var handle = new SafeFileHandle(fd, ownsHandle: true);
            FinishResult finished;
            OpenedFile opened;
            long length;
            while (true)
            {
                try
                {
                    finished = FileOpener.Finish(handle, request, out opened, out length);
                }
                catch
                {
                    await ring.CloseAsync(handle, mayWait: true).ConfigureAwait(false);
                    throw;
                }
                if (finished != FinishResult.OpenBlocking || opened.FileType != LinuxConstants.S_IFIFO)
                {
                    break;
                }
                // A FIFO's read end, opened without waiting: kept (closing it would drop what a writer wrote) and waited on.
                await UntilWriterCameAsync(handle, request, cancellationToken).ConfigureAwait(false);
                request.MayNotHaveWaited = false;
                nonBlocking = false;
            }
            if (finished == FinishResult.Opened)
            {
                return new OpenedHandle(handle, opened, length, nonBlocking ? request.Flags : -1);
            }
            await ring.CloseAsync(handle, mayWait: true).ConfigureAwait(false);
            if (finished == FinishResult.OpenBlocking)
            {
                return await OpenBlockingAsync(request, cancellationToken).ConfigureAwait(false);
            }
            if (finished != FinishResult.OpenAgain)
            {
                throw request.RemoveAfterPreallocationFailure(finished);
            }
            // The path names another file now (a lock file replaced while we waited for its lock): open it again.
            nonBlocking = false;
            result = await OpenOnRingAsync(ring, request, triedWithoutWaiting, cancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>
    /// <c>openat</c> on the ring; one that neither creates nor truncates goes with O_NONBLOCK (taken off after), so a FIFO
    /// comes back at once instead of waiting in an io-wq worker a cancellation may not free. EAGAIN (a lease) opens again waiting.
    /// </summary>
    private static async ValueTask<int> OpenOnRingAsync(IoUringEngine ring, OpenRequest request, bool withoutWaiting, CancellationToken cancellationToken)
    {
        if (!withoutWaiting || (request.Flags & OpenFlags.O_NONBLOCK) != 0)
        {
            return await ring.OpenAtAsync(request.FullPath, request.Flags, request.Permissions, cancellationToken).ConfigureAwait(false);
        }
        int result = await ring.OpenAtAsync(request.FullPath, request.Flags | OpenFlags.O_NONBLOCK, request.Permissions, cancellationToken).ConfigureAwait(false);
        if (result >= 0)
        {
            // F_SETFL sets only the status flags (O_APPEND, O_DIRECT, O_NONBLOCK, ...): the request's, without O_NONBLOCK.
            _ = Libc.Fcntl(result, LinuxConstants.F_SETFL, request.Flags);
        }
        else if (result == -Errno.EAGAIN)
        {
            result = await ring.OpenAtAsync(request.FullPath, request.Flags, request.Permissions, cancellationToken).ConfigureAwait(false);
        }
        return result;
    }

    /// <summary>
    /// The open from the lookup cache (row 14), without O_CREAT (refused there): a file that does not exist is created
    /// here with O_EXCL; the rest (one that appeared meanwhile, a FIFO without reader) is the ring's, with the request's flags.
    /// </summary>
    private static int TryOpenCached(in OpenRequest request, bool keepNonBlocking)
    {
        int flags = request.Flags & ~OpenFlags.O_CREAT;
        int result = Engines.FastPath.OpenFastPath.TryOpen(request.FullPath, keepNonBlocking ? flags | OpenFlags.O_NONBLOCK : flags);
        if ((request.Flags & OpenFlags.O_CREAT) == 0 || result >= 0)
        {
            return result;
        }
        if (result == -Errno.ENOENT || (result == -Errno.EAGAIN && DirectoryIsCached(request.FullPath)))
        {
            // Most likely new: created here as System.IO does; O_EXCL never opens an existing file (a FIFO could wait).
            result = Libc.OpenRetryingInterrupts(request.FullPath, request.Flags | OpenFlags.O_CREAT | OpenFlags.O_EXCL, request.Permissions);
            if (result >= 0)
            {
                return result;
            }
        }
        // The ring's, with the request's flags: a refusal without O_CREAT is not the answer to them (ENOTDIR vs EISDIR).
        return -Errno.EAGAIN;
    }

    /// <summary>Whether the directory of <paramref name="fullPath"/> is in the lookup cache (an open of it from the cache succeeds).</summary>
    private static bool DirectoryIsCached(string fullPath)
    {
        int slash = fullPath.LastIndexOf('/');
        int fd = slash <= 0 ? -1 : Engines.FastPath.OpenFastPath.TryOpen(fullPath.AsSpan(0, slash), OpenFlags.O_RDONLY | OpenFlags.O_DIRECTORY | OpenFlags.O_CLOEXEC | OpenFlags.O_NONBLOCK);
        if (fd < 0)
        {
            return false;
        }
        Libc.Close(fd);
        return true;
    }

    /// <summary>Waits for a writer on a FIFO's read end opened without waiting (<see cref="FifoWriterWait"/>), then makes it blocking as the request asked; closes it when the wait fails or is cancelled.</summary>
    private static async ValueTask UntilWriterCameAsync(SafeFileHandle readEnd, OpenRequest request, CancellationToken cancellationToken)
    {
        try
        {
            await FifoWriterWait.UntilWriterCameAsync(readEnd, cancellationToken).ConfigureAwait(false);
        }
        catch
        {
            readEnd.Dispose();
            throw;
        }
        _ = Libc.Fcntl(readEnd, LinuxConstants.F_SETFL, request.Flags); // a cached open may have kept O_NONBLOCK
    }

    /// <summary>The synchronous open, which waits as <c>open(2)</c> does, on a thread of its own; its token cancels it at any time.</summary>
    private static ValueTask<OpenedHandle> OpenBlockingAsync(OpenRequest request, CancellationToken cancellationToken)
    {
        request.MayNotHaveWaited = false;
        return new ValueTask<OpenedHandle>(CancellableBlockingOpen.Start(request, cancellationToken));
    }
}
