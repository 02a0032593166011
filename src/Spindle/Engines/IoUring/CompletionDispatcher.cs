using System.Collections.Concurrent;

namespace Spindle.Engines.IoUring;

/// <summary>
/// Moves completed operations from the ring thread to the thread pool, where their continuations
/// run inline: user code never runs on (and can never block) the ring thread, and a batch of
/// completions costs one work item rather than one per operation. A dispatcher that finds more work
/// queued asks for another pool thread first, so continuations still run in parallel.
/// </summary>
internal sealed class CompletionDispatcher : IThreadPoolWorkItem
{
    private readonly ConcurrentQueue<IoUringOperation> _completed = new();
    private int _scheduled; // 1 while a work item is queued and has not started taking operations

    /// <summary>Queues a completed operation (ring thread).</summary>
    internal void Deliver(IoUringOperation operation)
    {
        _completed.Enqueue(operation);
        EnsureScheduled();
    }

    private void EnsureScheduled()
    {
        if (Volatile.Read(ref _scheduled) == 0 && Interlocked.Exchange(ref _scheduled, 1) == 0)
        {
            System.Threading.ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
        }
    }

    public void Execute()
    {
        // From here on a new completion needs a new work item; this one may already be past it.
        Volatile.Write(ref _scheduled, 0);
        while (_completed.TryDequeue(out IoUringOperation? operation))
        {
            if (!_completed.IsEmpty)
            {
                EnsureScheduled();
            }
            operation.CompleteTask();
        }
    }
}
