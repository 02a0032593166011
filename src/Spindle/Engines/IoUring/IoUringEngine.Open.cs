using Microsoft.Win32.SafeHandles;
using Spindle.Handles;
using Spindle.Syscalls;

namespace Spindle.Engines.IoUring;

/// <summary>Opens and closes on the ring: the request kinds <see cref="RequestKind.Open"/> and <see cref="RequestKind.Close"/>.</summary>
internal sealed partial class IoUringEngine
{
    internal override ValueTask<OpenedHandle> OpenAsync(OpenRequest request, CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled<OpenedHandle>(cancellationToken);
        }
        return RingOpen.OpenAsync(this, request, tryCached: Router.RouteOpen(request.Flags) == Mechanism.FastPath, cancellationToken);
    }

    internal override ValueTask CloseAsync(SafeFileHandle handle, bool mayWait)
    {
        if (Router.RouteClose(mayWait) != Mechanism.Ring || !SafeFileHandleInternals.TryTakeDescriptor(handle, out int fd))
        {
            return base.CloseAsync(handle, mayWait);
        }
        RingOpenAt operation = Operations.Rent(Operations.Opens, mayBlock: false);
        operation.PrepareClose(fd);
        return new ValueTask(operation, Start(operation, CancellationToken.None));
    }

    /// <summary>
    /// <c>openat(AT_FDCWD, fullPath, flags, permissions)</c> on the ring: the descriptor, or the negated errno. A
    /// cancellation completes the task as cancelled only once no descriptor of this open is left.
    /// </summary>
    internal ValueTask<int> OpenAtAsync(string fullPath, int flags, int permissions, CancellationToken cancellationToken)
    {
        // An open may wait for ever (a FIFO without its other end): it goes in the lane of such operations.
        RingOpenAt operation = Operations.Rent(Operations.Opens, mayBlock: true);
        try
        {
            operation.Prepare(fullPath, flags, permissions);
        }
        catch (Exception e)
        {
            return ValueTask.FromException<int>(Operations.Abandon(operation, e));
        }
        return new ValueTask<int>(operation, Start(operation, cancellationToken));
    }
}
