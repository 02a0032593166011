using System.Collections.Concurrent;

namespace Spindle.Engines;

/// <summary>
/// Threads of Spindle's own for calls that may block indefinitely (an idle pipe's read): an item never waits for a
/// thread (an idle one takes it, or one starts), so it holds no pool thread and waits behind none. Idle threads retire.
/// </summary>
internal sealed class WorkerThreads
{
    private readonly string _name;
    private readonly ConcurrentQueue<IThreadPoolWorkItem> _items = new();
    // Not SemaphoreSlim: its spin before blocking costs sched_yield calls on every operation; a thread that finds no
    // work should simply sleep.
    private readonly Semaphore _wake = new(0, int.MaxValue);
    private int _idle;      // threads waiting on _wake that no one has claimed yet

    private WorkerThreads(string name) => _name = name;

    /// <summary>Threads for operations that may block indefinitely: one per item when none is idle.</summary>
    internal static WorkerThreads Blocking { get; } = new("Spindle blocking I/O");

    /// <summary>Queues an item (any thread).</summary>
    internal void Queue(IThreadPoolWorkItem item)
    {
        _items.Enqueue(item);
        // Pairs with the fence a worker makes before it sleeps: either it sees the item or we see it idle.
        Interlocked.MemoryBarrier();
        if (TryClaimIdle())
        {
            _wake.Release();
        }
        else
        {
            StartThread();
        }
    }

    private bool TryClaimIdle()
    {
        int idle;
        while ((idle = Volatile.Read(ref _idle)) > 0)
        {
            if (Interlocked.CompareExchange(ref _idle, idle - 1, idle) == idle)
            {
                return true;
            }
        }
        return false;
    }

    private void StartThread()
    {
        try
        {
            var thread = new Thread(static state => ((WorkerThreads)state!).Work()) { IsBackground = true, Name = _name };
            thread.UnsafeStart(this);
        }
        catch (OutOfMemoryException)
        {
            // No thread to be had (limits): let a pool thread drain the queue rather than strand it.
            System.Threading.ThreadPool.UnsafeQueueUserWorkItem(static group => group.Drain(), this, preferLocal: false);
        }
    }

    private void Drain()
    {
        while (_items.TryDequeue(out IThreadPoolWorkItem? item))
        {
            item.Execute();
        }
    }

    private void Work()
    {
        while (true)
        {
            Drain();

            // Go idle, then look once more: a Queue that saw us running did not wake anyone.
            Interlocked.Increment(ref _idle);
            Interlocked.MemoryBarrier();
            if (!_items.IsEmpty && TryClaimIdle())
            {
                continue;
            }
            if (!_wake.WaitOne(EngineTunables.IdleThreadMilliseconds))
            {
                if (TryClaimIdle())
                {
                    return; // nobody needed this thread: retire
                }
                // Someone claimed an idle thread just now; its release is on the way.
                _wake.WaitOne();
            }
            // Whoever released us counted us as running again.
        }
    }
}
