using Microsoft.Win32.SafeHandles;
using Spindle.Engines.ThreadPool;
using Spindle.Handles;

namespace Spindle.Engines;

/// <summary>Opening and closing files asynchronously (<see cref="RequestKind.Open"/>, <see cref="RequestKind.Close"/>).</summary>
internal abstract partial class FileIoEngine
{
    /// <summary>
    /// Opens what <paramref name="request"/> describes, with every rule of the synchronous open (the io_uring engine on
    /// its ring). I/O errors come through the task; a cancellation leaves no descriptor open.
    /// </summary>
    internal virtual ValueTask<OpenedHandle> OpenAsync(OpenRequest request, CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled<OpenedHandle>(cancellationToken);
        }
        if (Kind != IoEngine.Sync)
        {
            return PoolOpen.Start(request, cancellationToken);
        }
        try
        {
            return new ValueTask<OpenedHandle>(new OpenedHandle(FileOpener.Open(ref request, out OpenedFile opened), opened));
        }
        catch (Exception e)
        {
            return ValueTask.FromException<OpenedHandle>(e);
        }
    }

    /// <summary>
    /// Closes a handle as its <c>Dispose</c> would (DeleteOnClose, the lock, the descriptor); the io_uring engine
    /// closes on the ring a handle Spindle alone holds whose close may wait (<see cref="Router.RouteClose"/>). Never fails.
    /// </summary>
    /// <param name="handle">The handle.</param>
    /// <param name="mayWait">False only where the close is known not to wait (a local file system, no DeleteOnClose).</param>
    internal virtual ValueTask CloseAsync(SafeFileHandle handle, bool mayWait)
    {
        handle.Dispose();
        return default;
    }
}
