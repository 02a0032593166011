using Microsoft.Win32.SafeHandles;
using Spindle.Engines.ThreadPool;
using Spindle.Handles;

namespace Spindle.Engines;

/// <summary>Opening and closing files asynchronously (<see cref="RequestKind.Open"/>, <see cref="RequestKind.Close"/>).</summary>
internal abstract partial class FileIoEngine
{
    /// <summary>Opens <paramref name="request"/> with every rule of the synchronous open; errors come through the task, a cancellation leaves no descriptor.</summary>
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
    /// Closes a handle as its <c>Dispose</c> would; never fails. The io_uring engine closes on the ring a handle Spindle
    /// alone holds when <paramref name="mayWait"/> (false only where it is known not to: a local file system, no DeleteOnClose).
    /// </summary>
    internal virtual ValueTask CloseAsync(SafeFileHandle handle, bool mayWait)
    {
        handle.Dispose();
        return default;
    }
}
