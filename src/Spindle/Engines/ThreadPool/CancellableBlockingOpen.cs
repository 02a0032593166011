using Spindle.Handles;

namespace Spindle.Engines.ThreadPool;

/// <summary>
/// An open that may wait for ever (a FIFO waiting for its other end) on <see cref="WorkerThreads.Blocking"/>. Its token
/// completes the task as cancelled at once, while the thread still waits in the kernel (nothing interrupts that wait);
/// an open that returns after that closes what it opened, so no descriptor is left behind. Rare enough to allocate.
/// </summary>
internal sealed class CancellableBlockingOpen(in OpenRequest request, CancellationToken cancellationToken)
    : IThreadPoolWorkItem
{
    private readonly TaskCompletionSource<OpenedHandle> _completion = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly CancellationToken _cancellationToken = cancellationToken;
    private CancellationTokenRegistration _registration;
    private OpenRequest _request = request;

    /// <summary>Queues the open; the task completes with its handle, its exception, or as cancelled once the token is.</summary>
    internal static Task<OpenedHandle> Start(in OpenRequest request, CancellationToken cancellationToken)
    {
        var open = new CancellableBlockingOpen(request, cancellationToken);
        open._registration = cancellationToken.UnsafeRegister(
            static (state, token) => ((CancellableBlockingOpen)state!)._completion.TrySetCanceled(token), open);
        WorkerThreads.Blocking.Queue(open);
        return open._completion.Task;
    }

    void IThreadPoolWorkItem.Execute()
    {
        if (_cancellationToken.IsCancellationRequested)
        {
            _completion.TrySetCanceled(_cancellationToken);
            return;
        }
        OpenedHandle result;
        try
        {
            result = new OpenedHandle(FileOpener.Open(ref _request, out OpenedFile opened), opened);
        }
        catch (Exception e)
        {
            _registration.Dispose();
            _completion.TrySetException(e);
            return;
        }
        _registration.Dispose();
        if (!_completion.TrySetResult(result))
        {
            result.Handle.Dispose(); // the caller was told it was cancelled: no one will ever take this handle
        }
    }
}
