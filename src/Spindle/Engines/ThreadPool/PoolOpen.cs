using System.Threading.Tasks.Sources;
using Spindle.Handles;
using Spindle.Interop;

namespace Spindle.Engines.ThreadPool;

/// <summary>
/// The synchronous open on a thread-pool thread, for engines without a ring: a pooled <see cref="IValueTaskSource{T}"/>
/// that is its own work item, so an open allocates nothing beyond the handle. A token cancelled before the work
/// item runs completes it as cancelled without opening; once <c>open(2)</c> started, the open runs to its end. A FIFO,
/// whose open waits for its other end, is handed to <see cref="CancellableBlockingOpen"/>, which its token cancels at
/// any time (one <c>statx</c> of the path on the pool thread finds it; a path that becomes a FIFO after that opens
/// here).
/// </summary>
internal sealed unsafe class PoolOpen : IValueTaskSource<OpenedHandle>, IThreadPoolWorkItem
{
    private static readonly OperationPool<PoolOpen> s_pool = new(256);

    private ManualResetValueTaskSourceCore<OpenedHandle> _core; // completed on the pool thread that ran the open
    private OpenRequest _request;
    private CancellationToken _cancellationToken;

    private PoolOpen() => _core.RunContinuationsAsynchronously = false;

    /// <summary>Queues the open.</summary>
    internal static ValueTask<OpenedHandle> Start(in OpenRequest request, CancellationToken cancellationToken)
    {
        PoolOpen operation = s_pool.TryRent() ?? new PoolOpen();
        operation._request = request;
        operation._cancellationToken = cancellationToken;
        short version = operation._core.Version;
        // preferLocal as the engine's other operations (ThreadPoolEngine.Queue): a caller that blocks on the result is helped first.
        System.Threading.ThreadPool.UnsafeQueueUserWorkItem(operation, preferLocal: true);
        return new ValueTask<OpenedHandle>(operation, version);
    }

    void IThreadPoolWorkItem.Execute()
    {
        CancellationToken cancellationToken = _cancellationToken;
        if (cancellationToken.IsCancellationRequested)
        {
            _core.SetException(new OperationCanceledException(cancellationToken));
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
            var handle = FileOpener.Open(ref _request, out OpenedFile opened);
            _core.SetResult(new OpenedHandle(handle, opened));
        }
        catch (Exception e)
        {
            _core.SetException(e);
        }
    }

    // The outcome of the FIFO's open, which completes once, before this operation can go back to the pool.
    private void Forward(Task<OpenedHandle> open)
    {
        if (open.IsCompletedSuccessfully)
        {
            _core.SetResult(open.Result);
        }
        else if (open.IsCanceled)
        {
            _core.SetException(new OperationCanceledException(_cancellationToken));
        }
        else
        {
            _core.SetException(open.Exception!.InnerException!);
        }
    }

    private static bool IsFifo(string path)
    {
        StatxBuffer status;
        return Libc.Statx(LinuxConstants.AT_FDCWD, path, 0, LinuxConstants.STATX_TYPE, &status) == 0
            && (status.Mode & LinuxConstants.S_IFMT) == LinuxConstants.S_IFIFO;
    }

    public ValueTaskSourceStatus GetStatus(short token) => _core.GetStatus(token);

    public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
        => _core.OnCompleted(continuation, state, token, flags);

    public OpenedHandle GetResult(short token)
    {
        try
        {
            return _core.GetResult(token);
        }
        finally
        {
            _core.Reset();
            _request = default;
            _cancellationToken = default;
            s_pool.Return(this);
        }
    }
}
