namespace Spindle.Engines;

/// <summary>
/// Where the continuations of operations completed by a reaper (the io_uring thread) run: on the .NET
/// thread pool, one work item per completion, as the runtime's own socket engine hands epoll's events
/// to the pool. So continuations use every core, an exception a continuation throws ends the process as
/// on any pool thread, and whatever thread state a continuation sets (background flag, synchronization
/// context, execution context, priority, name, culture) is reset by the pool after it. The reaper only
/// queues: no user code and no metrics listener ever runs on the thread the ring depends on.
/// <para>
/// The pool may be starved: every pool thread blocked waiting synchronously for a completion queued
/// behind them (sync-over-async on a capped pool). The one stall watchdog here then sees the queue of
/// completions stop moving and hands it to rescue threads of Spindle's own, which run each continuation
/// in a clean execution context and reset the thread's state after it, and retire when idle. Once it has
/// seen the pool starved, each completion wakes an idle rescue thread at once, until a pool thread takes
/// a completion again: a pool that stays starved (callers blocking every pool thread on their reads) then
/// waits for the device, not for the watchdog's stall detection once per read.
/// </para>
/// </summary>
internal sealed class ContinuationDispatcher : IThreadPoolWorkItem
{
    // Ticks (about 1 ms each) without progress while completions wait before rescue threads step in:
    // long enough that a pool busy with user code is not mistaken for a starved one.
    private const int StallTicks = 10;
    private const int QuietTicksBeforeParking = 100;
    private const int RescueIdleMilliseconds = 20_000; // as long as the pool keeps an idle thread

    private static readonly AsyncLocal<bool> s_marker = new();

    // The dispatcher whose continuation this thread is running, if any.
    [ThreadStatic]
    private static ContinuationDispatcher? t_running;
    private static readonly ContextCallback s_runOne = static state => ((ContinuationDispatcher)state!).RunOne();

    private readonly string _name;
    private readonly Action<IThreadPoolWorkItem> _queueToPool;
    private readonly ReadyCompletions _ready = new();   // newest first, unless one waited too long
    private long _taken;                       // completions run so far (the watchdog's measure of progress)
    private int _running;                      // continuations running now
    private readonly SemaphoreSlim _watchdogWake = new(0);
    private int _watchdogParked = 1;           // 1 while the watchdog sleeps (no backlog lately) or was never started
    private bool _watchdogStarted;
    private readonly SemaphoreSlim _rescueWake = new(0);
    private int _rescueIdle;                   // rescue threads waiting for work that nobody claimed yet
    private int _rescueThreads;                // rescue threads alive (tests and diagnostics)
    private int _poolStarved;                  // 1 from a stall until a pool thread takes a completion again
    private long _stalls;                      // stalls the watchdog saw (tests and diagnostics)
    private ExecutionContext? _clean;          // a context with nothing of the user's in it

    /// <param name="name">The name of the rescue threads and the watchdog.</param>
    /// <param name="queueToPool">How a work item reaches the thread pool (tests give a pool that never runs it, a starved one).</param>
    internal ContinuationDispatcher(string name, Action<IThreadPoolWorkItem>? queueToPool = null)
    {
        _name = name;
        _queueToPool = queueToPool ?? s_queueToThreadPool;
    }

    private static readonly Action<IThreadPoolWorkItem> s_queueToThreadPool =
        static item => System.Threading.ThreadPool.UnsafeQueueUserWorkItem(item, preferLocal: false);

    /// <summary>Continuations running now (until each returns, or awaits again).</summary>
    internal int Running => Volatile.Read(ref _running);

    /// <summary>Continuations running now on threads other than the caller's (which may be running one itself).</summary>
    internal int RunningBesidesCaller => Running - (t_running == this ? 1 : 0);

    /// <summary>Rescue threads alive now: 0 unless the pool was starved lately.</summary>
    internal int RescueThreads => Volatile.Read(ref _rescueThreads);

    /// <summary>How many times the watchdog saw the completions stop moving (tests and diagnostics).</summary>
    internal long Stalls => Interlocked.Read(ref _stalls);

    /// <summary>Queues a completion whose <see cref="IThreadPoolWorkItem.Execute"/> runs its continuation (the reaper; never blocks, never runs user code).</summary>
    internal void Post(IThreadPoolWorkItem completion)
    {
        _ready.Add(completion);
        // One pool item per completion; each takes whichever completion is next, so a rescue thread
        // that took some leaves the pool's items nothing to do, never something to do twice.
        _queueToPool(this);
        if (Volatile.Read(ref _poolStarved) != 0)
        {
            // Pairs with the fence a rescue thread makes when it goes idle: it sees the completion, or we see it idle.
            Interlocked.MemoryBarrier();
            TryWakeIdleRescue();
        }
        if (Volatile.Read(ref _watchdogParked) != 0)
        {
            WakeWatchdog();
        }
    }

    void IThreadPoolWorkItem.Execute()
    {
        if (RunOne() && Volatile.Read(ref _poolStarved) != 0)
        {
            Volatile.Write(ref _poolStarved, 0); // a pool thread took one: the pool serves again
        }
    }

    private bool RunOne()
    {
        if (!_ready.TryTake(out IThreadPoolWorkItem item))
        {
            return false;
        }
        Interlocked.Increment(ref _taken);
        Interlocked.Increment(ref _running);
        ContinuationDispatcher? outer = t_running;
        t_running = this;
        try
        {
            item.Execute(); // an exception here is the user's: it ends the process, as on any pool thread
        }
        finally
        {
            t_running = outer;
            Interlocked.Decrement(ref _running);
        }
        return true;
    }

    private void WakeWatchdog()
    {
        if (Interlocked.Exchange(ref _watchdogParked, 0) == 0)
        {
            return;
        }
        if (!_watchdogStarted)
        {
            lock (_ready)
            {
                if (!_watchdogStarted)
                {
                    try
                    {
                        new Thread(static state => ((ContinuationDispatcher)state!).Watch()) { IsBackground = true, Name = _name + " watchdog" }.UnsafeStart(this);
                        _watchdogStarted = true;
                    }
                    catch (OutOfMemoryException)
                    {
                        // No thread now (limits): the next post tries again.
                        Volatile.Write(ref _watchdogParked, 1);
                    }
                    return;
                }
            }
        }
        _watchdogWake.Release();
    }

    /// <summary>The stall watchdog: ticks while completions wait; hands them to rescue threads when the pool stops taking them.</summary>
    private void Watch()
    {
        long last = -1;
        int stalled = 0;
        int quiet = 0;
        while (true)
        {
            Thread.Sleep(1);
            if (_ready.IsEmpty)
            {
                stalled = 0;
                if (++quiet < QuietTicksBeforeParking)
                {
                    continue;
                }
                Volatile.Write(ref _watchdogParked, 1);
                Interlocked.MemoryBarrier();
                // A post after our last look saw us parked and released the semaphore; one before it is in the queue.
                if (!_ready.IsEmpty && Interlocked.Exchange(ref _watchdogParked, 0) != 0)
                {
                    quiet = 0;
                    continue;
                }
                _watchdogWake.Wait();
                quiet = 0;
                last = -1;
                continue;
            }
            quiet = 0;
            long taken = Volatile.Read(ref _taken);
            if (taken != last)
            {
                last = taken;
                stalled = 0;
                continue;
            }
            if (++stalled >= StallTicks)
            {
                stalled = 0;
                Rescue();
            }
        }
    }

    private void Rescue()
    {
        Interlocked.Increment(ref _stalls);
        Volatile.Write(ref _poolStarved, 1);
        if (TryWakeIdleRescue())
        {
            return;
        }
        try
        {
            Interlocked.Increment(ref _rescueThreads);
            new Thread(static state => ((ContinuationDispatcher)state!).RescueLoop()) { IsBackground = true, Name = _name }.UnsafeStart(this);
        }
        catch (OutOfMemoryException)
        {
            Interlocked.Decrement(ref _rescueThreads);
        }
    }

    private bool TryWakeIdleRescue()
    {
        int idle;
        while ((idle = Volatile.Read(ref _rescueIdle)) > 0)
        {
            if (Interlocked.CompareExchange(ref _rescueIdle, idle - 1, idle) == idle)
            {
                _rescueWake.Release();
                return true;
            }
        }
        return false;
    }

    private void RescueLoop()
    {
        if (_clean is null)
        {
            // Started without flow: the context holds only our marker, which user code cannot see.
            s_marker.Value = true;
            Interlocked.CompareExchange(ref _clean, ExecutionContext.Capture(), null);
        }
        Thread thread = Thread.CurrentThread;
        while (true)
        {
            // Each continuation in the clean context: Run restores the execution and synchronization
            // contexts it changed; the rest of what the pool resets is reset by hand.
            while (!_ready.IsEmpty)
            {
                ExecutionContext.Run(_clean!, s_runOne, this);
                if (!thread.IsBackground)
                {
                    thread.IsBackground = true;
                }
                if (thread.Priority != ThreadPriority.Normal)
                {
                    thread.Priority = ThreadPriority.Normal;
                }
                if (thread.Name != _name)
                {
                    thread.Name = _name;
                }
            }
            Interlocked.Increment(ref _rescueIdle);
            if (!_ready.IsEmpty && Volatile.Read(ref _poolStarved) != 0)
            {
                TryWakeIdleRescue(); // posted before the increment, when no rescue thread looked idle
            }
            if (!_rescueWake.Wait(RescueIdleMilliseconds))
            {
                int idle;
                while ((idle = Volatile.Read(ref _rescueIdle)) > 0)
                {
                    if (Interlocked.CompareExchange(ref _rescueIdle, idle - 1, idle) == idle)
                    {
                        Interlocked.Decrement(ref _rescueThreads);
                        return; // nobody needed this thread: retire
                    }
                }
                _rescueWake.Wait(); // claimed just now: its release is on the way
            }
        }
    }
}
