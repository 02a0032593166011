using Spindle.Handles;
using Spindle.Interop;

namespace Spindle.Engines.ThreadPool;

/// <summary>
/// The synchronous open on a pool thread, for engines without a ring; pooled and its own work item, so an open
/// allocates nothing beyond the handle. A token cancelled before it runs cancels it; once <c>open(2)</c> started, it
/// runs to its end. A FIFO (one <c>statx</c> on the pool thread finds it), whose open waits for its other end, goes to
/// <see cref="CancellableBlockingOpen"/>, which its token cancels at any time.
/// </summary>
internal sealed unsafe class PoolOpen : PooledTaskSource<OpenedHandle>, IThreadPoolWorkItem
{
    private static readonly OperationPool<PoolOpen> s_pool = new(256);

    private OpenRequest _request;
    private CancellationToken _cancellationToken;

    /// <summary>Queues the open.</summary>
    internal static ValueTask<OpenedHandle> Start(in OpenRequest request, CancellationToken cancellationToken)
    {
        PoolOpen operation = s_pool.TryRent() ?? new PoolOpen();
        operation._request = request;
        operation._cancellationToken = cancellationToken;
        short version = operation.Version;
        // preferLocal as the engine's other operations (ThreadPoolEngine.Queue): a caller that blocks on the result is helped first.
        System.Threading.ThreadPool.UnsafeQueueUserWorkItem(operation, preferLocal: true);
        return new ValueTask<OpenedHandle>(operation, version);
    }

    void IThreadPoolWorkItem.Execute()
    {
        CancellationToken cancellationToken = _cancellationToken;
        if (cancellationToken.IsCancellationRequested)
        {
            Complete(default, new OperationCanceledException(cancellationToken));
            return;
        }
        if (IsFifo(_request.FullPath))
        {
            Task<OpenedHandle> open = CancellableBlockingOpen.Start(_request, cancellationToken);
            open.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(() => Forward(open));
            return;
        }
        try
        {
            Complete(new OpenedHandle(FileOpener.Open(ref _request, out OpenedFile opened), opened), null);
        }
        catch (Exception e)
        {
            Complete(default, e);
        }
    }

    // The outcome of the FIFO's open, which completes once, before this operation can go back to the pool.
    private void Forward(Task<OpenedHandle> open)
    {
        if (open.IsCompletedSuccessfully)
        {
            Complete(open.Result, null);
        }
        else
        {
            Complete(default, open.IsCanceled ? new OperationCanceledException(_cancellationToken) : open.Exception!.InnerException!);
        }
    }

    private static bool IsFifo(string path)
    {
        StatxBuffer status;
        return Libc.Statx(LinuxConstants.AT_FDCWD, path, 0, LinuxConstants.STATX_TYPE, &status) == 0
            && (status.Mode & LinuxConstants.S_IFMT) == LinuxConstants.S_IFIFO;
    }

    private protected override void Recycle()
    {
        _request = default;
        _cancellationToken = default;
        s_pool.Return(this);
    }
}
