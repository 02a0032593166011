using System.Collections.Concurrent;

namespace Spindle.Engines;

/// <summary>
/// A group of Spindle's own threads that run work items outside the .NET thread pool, so that the
/// work never waits behind (or for) pool threads that user code blocked: completions still arrive
/// when every pool thread waits synchronously for one (sync-over-async), and a read that may wait for
/// ever (an idle pipe) never holds a pool thread that a file read needs.
/// <para>
/// Two policies. <see cref="ThreadPerItem"/>: an item never waits for a thread (a new one starts when
/// none is idle) — for system calls that can block indefinitely. Otherwise the group is a completion
/// port: items run one after another on as few threads as possible, and a watchdog adds a thread only
/// when the queue has not moved for a millisecond (an item is blocked or long), much like Windows adds
/// I/O completion threads when one blocks. Idle threads beyond need retire after a few seconds.
/// </para>
/// </summary>
internal sealed class WorkerThreads
{
    private const int IdleMilliseconds = 5_000;   // an idle thread retires after this long
    private const int WatchTicks = 2_000;          // watchdog ticks (about 1 ms each) without backlog before it sleeps

    private readonly string _name;
    private readonly ConcurrentQueue<IThreadPoolWorkItem> _items = new();
    // Not SemaphoreSlim: its spin before blocking cost 3 sched_yield calls per I/O operation at
    // queue depth 8 (perf stat); a completion thread that finds no work should simply sleep.
    private readonly Semaphore _wake = new(0, int.MaxValue);
    private readonly SemaphoreSlim _watchSignal = new(0);
    private int _idle;      // threads waiting on _wake that no one has claimed yet
    private int _running;   // threads taking items (started or claimed, not idle)
    private long _taken;    // items taken so far: what the watchdog measures progress by
    private int _watching;  // 1 while the watchdog polls
    private bool _watchdogStarted;

    private WorkerThreads(string name, bool threadPerItem)
    {
        _name = name;
        ThreadPerItem = threadPerItem;
    }

    /// <summary>Threads for operations that may block indefinitely: one per item when none is idle.</summary>
    internal static WorkerThreads Blocking { get; } = new("Spindle blocking I/O", threadPerItem: true);

    /// <summary>Whether every item gets a thread at once (else items share threads, added when one blocks).</summary>
    internal bool ThreadPerItem { get; }

    /// <summary>Creates a completion-port group (items share threads).</summary>
    internal static WorkerThreads CreateCompletionPort(string name) => new(name, threadPerItem: false);

    /// <summary>Threads in the group that are taking items (for tests and diagnostics).</summary>
    internal int Running => Volatile.Read(ref _running);

    /// <summary>Queues an item (any thread).</summary>
    internal void Queue(IThreadPoolWorkItem item)
    {
        _items.Enqueue(item);
        // Pairs with the fence a worker makes before it sleeps: either it sees the item or we see it idle.
        Interlocked.MemoryBarrier();
        if (ThreadPerItem)
        {
            if (!TryWakeIdle())
            {
                StartThread();
            }
            return;
        }
        if (Volatile.Read(ref _running) == 0)
        {
            if (!TryWakeIdle())
            {
                StartThread();
            }
            return;
        }
        // A thread is taking items and will reach this one, unless its current item blocks.
        Watch();
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

    private bool TryWakeIdle()
    {
        if (!TryClaimIdle())
        {
            return false;
        }
        Interlocked.Increment(ref _running);
        _wake.Release();
        return true;
    }

    private void StartThread()
    {
        Interlocked.Increment(ref _running);
        try
        {
            var thread = new Thread(static state => ((WorkerThreads)state!).Work()) { IsBackground = true, Name = _name };
            thread.UnsafeStart(this);
        }
        catch (OutOfMemoryException)
        {
            // No thread to be had (limits): let a pool thread drain the queue rather than strand it.
            Interlocked.Decrement(ref _running);
            System.Threading.ThreadPool.UnsafeQueueUserWorkItem(static group => group.Drain(), this, preferLocal: false);
        }
    }

    private void Drain()
    {
        while (_items.TryDequeue(out IThreadPoolWorkItem? item))
        {
            Interlocked.Increment(ref _taken);
            item.Execute();
        }
    }

    private void Work()
    {
        while (true)
        {
            Drain();

            // Go idle, then look once more: a Queue that saw us running did not wake anyone.
            Interlocked.Decrement(ref _running);
            Interlocked.Increment(ref _idle);
            Interlocked.MemoryBarrier();
            if (!_items.IsEmpty && TryClaimIdle())
            {
                Interlocked.Increment(ref _running);
                continue;
            }
            if (!_wake.WaitOne(IdleMilliseconds))
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

    private void Watch()
    {
        if (Volatile.Read(ref _watching) == 0 && Interlocked.Exchange(ref _watching, 1) == 0)
        {
            if (!_watchdogStarted)
            {
                lock (_items)
                {
                    if (!_watchdogStarted)
                    {
                        var thread = new Thread(static state => ((WorkerThreads)state!).WatchLoop()) { IsBackground = true, Name = _name + " watchdog" };
                        thread.UnsafeStart(this);
                        _watchdogStarted = true;
                    }
                }
            }
            _watchSignal.Release();
        }
    }

    private void WatchLoop()
    {
        while (true)
        {
            _watchSignal.Wait();
            long seen = Volatile.Read(ref _taken);
            int quiet = 0;
            while (true)
            {
                Thread.Sleep(1);
                long taken = Volatile.Read(ref _taken);
                if (_items.IsEmpty)
                {
                    if (++quiet < WatchTicks)
                    {
                        seen = taken;
                        continue;
                    }
                    Volatile.Write(ref _watching, 0);
                    Interlocked.MemoryBarrier();
                    if (_items.IsEmpty || Interlocked.Exchange(ref _watching, 1) != 0)
                    {
                        break; // quiet: sleep until the next backlog (or another Watch took over)
                    }
                    quiet = 0;
                    continue;
                }
                quiet = 0;
                if (taken == seen)
                {
                    // Items waited a whole tick while every thread was busy: one of them is blocked.
                    if (!TryWakeIdle())
                    {
                        StartThread();
                    }
                }
                seen = taken;
            }
        }
    }
}
