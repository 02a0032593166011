using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Engines.IoUring;

namespace Spindle.Handles;

internal static partial class FileOpener
{
    /// <summary>
    /// The open on the ring: <c>openat</c> as an SQE, then the same steps after it as the synchronous open
    /// (<see cref="Finish"/>) where the continuation runs, and the ring's <c>close</c> when they fail. The steps after
    /// the open are short system calls on the descriptor (<c>fstat</c>, <c>flock</c> without waiting, <c>ftruncate</c>,
    /// <c>fallocate</c>); the path lookup, which may read directories from the disk, is what the ring takes off the
    /// thread. Pooled: an open that completes later allocates no state machine.
    /// </summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    internal static async ValueTask<OpenedHandle> OpenAsync(IoUringEngine ring, OpenRequest request, CancellationToken cancellationToken)
    {
        int result = await ring.OpenAtAsync(request.FullPath, request.Flags, request.Permissions, cancellationToken).ConfigureAwait(false);
        while (true)
        {
            int fd = Opened(ref request, result);
            var handle = new SafeFileHandle(fd, ownsHandle: true);
            FinishResult finished;
            OpenedFile opened;
            try
            {
                finished = Finish(handle, fd, request, out opened);
            }
            catch
            {
                await ring.CloseAsync(handle).ConfigureAwait(false);
                throw;
            }
            if (finished == FinishResult.Opened)
            {
                return new OpenedHandle(handle, opened);
            }
            await ring.CloseAsync(handle).ConfigureAwait(false);
            if (finished != FinishResult.OpenAgain)
            {
                throw request.RemoveAfterPreallocationFailure(finished);
            }
            // The path names another file now (a lock file replaced while we waited for its lock): open it again.
            result = await ring.OpenAtAsync(request.FullPath, request.Flags, request.Permissions, cancellationToken).ConfigureAwait(false);
        }
    }
}
