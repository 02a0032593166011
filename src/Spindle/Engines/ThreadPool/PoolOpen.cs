using System.Threading.Tasks.Sources;
using Spindle.Handles;

namespace Spindle.Engines.ThreadPool;

/// <summary>
/// The synchronous open on a thread-pool thread, for engines without a ring: a pooled <see cref="IValueTaskSource{T}"/>
/// that is its own work item, so an open allocates nothing beyond the handle. A token cancelled before the work
/// item runs completes it as cancelled without opening; once <c>open(2)</c> started, the open runs to its end.
/// </summary>
internal sealed class PoolOpen : IValueTaskSource<OpenedHandle>, IThreadPoolWorkItem
{
    private static readonly OperationPool<PoolOpen> s_pool = new(256);

    private ManualResetValueTaskSourceCore<OpenedHandle> _core; // completed on the pool thread that ran the open
    private OpenRequest _request;
    private CancellationToken _cancellationToken;

    private PoolOpen() => _core.RunContinuationsAsynchronously = false;

    /// <summary>
    /// Queues the open; <paramref name="mayWaitForEver"/> (a FIFO, which waits for its other end) runs it on a thread
    /// of its own (<see cref="WorkerThreads.Blocking"/>), never holding a pool thread that other I/O needs.
    /// </summary>
    internal static ValueTask<OpenedHandle> Start(in OpenRequest request, CancellationToken cancellationToken, bool mayWaitForEver = false)
    {
        PoolOpen operation = s_pool.TryRent() ?? new PoolOpen();
        operation._request = request;
        operation._cancellationToken = cancellationToken;
        short version = operation._core.Version;
        if (mayWaitForEver)
        {
            WorkerThreads.Blocking.Queue(operation);
        }
        else
        {
            // preferLocal as the engine's other operations (ThreadPoolEngine.Queue): a caller that blocks on the result is helped first.
            System.Threading.ThreadPool.UnsafeQueueUserWorkItem(operation, preferLocal: true);
        }
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
