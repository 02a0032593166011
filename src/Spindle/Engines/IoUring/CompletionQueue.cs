using System.Collections.Concurrent;
using System.Numerics;
using Spindle.Diagnostics;

namespace Spindle.Engines.IoUring;

/// <summary>
/// Completed operations whose continuations wait for a pool thread, and the one work item that runs them, as the
/// runtime's socket engine hands epoll's events to the pool (<c>SocketAsyncEngine.Unix.cs</c>): a reaper posts, and
/// queues the work item only when none is queued. What the continuations start is submitted together when the queue
/// runs dry, or once a request has waited <see cref="EngineTunables.BatchWindowMicroseconds"/>. A helper (another pool
/// thread) is queued only when continuations work (<see cref="EngineTunables.HelperAfterLongContinuations"/> of the
/// latest <see cref="EngineTunables.HelperRecentContinuations"/> ran longer than <see cref="EngineTunables.HelperAfterMicroseconds"/>)
/// or one blocks (the ring's thread finds the queue stuck): each helper costs a wake-up. Run dry, the work item polls
/// the ring itself while its requests are in the kernel (<see cref="RingThread.TryPollForDrain"/>), so the thread that
/// reaps is the thread that runs the continuations; it returns when the kernel has nothing for it, or after
/// <see cref="EngineTunables.CompletionTimeSliceMilliseconds"/> when other work items wait for the pool.
/// </summary>
internal sealed class CompletionQueue : IThreadPoolWorkItem
{
    // The queue whose work item runs on this thread now: what it reaps, it runs (a continuation that blocks meanwhile is
    // found by the ring's thread, HelpIfStuck).
    [ThreadStatic]
    private static CompletionQueue? t_collecting;

    private const uint RecentMask = (1u << EngineTunables.HelperRecentContinuations) - 1;

    private static readonly long s_helperAfterTicks = System.Diagnostics.Stopwatch.Frequency * EngineTunables.HelperAfterMicroseconds / 1_000_000;

    private readonly RingThread _ring;
    private readonly ConcurrentQueue<(IThreadPoolWorkItem Item, uint Generation)> _ready = new();
    private int _requested; // 1 while a work item is queued and has not started
    private int _running;   // work items running now
    private long _taken;    // entries taken so far: the ring's thread sees whether the queue moves
    private long _takenAtLastLook;

    internal CompletionQueue(RingThread ring)
    {
        _ring = ring;
        Rescue = new StarvedPoolRescue(this);
    }

    /// <summary>Runs the queue on a thread of its own when the pool does not start its work item (a starved pool).</summary>
    internal StarvedPoolRescue Rescue { get; }

    /// <summary>Whether a work item is queued or running: it will poll the ring when it runs dry (any thread).</summary>
    internal bool HasDrains => Volatile.Read(ref _requested) != 0 || Volatile.Read(ref _running) != 0;

    /// <summary>
    /// Queues a completion (any thread; never blocks, never runs user code). An operation's entry carries its
    /// <paramref name="generation"/>: a waiter may take the operation first (<see cref="RingOperation.RunQueued"/>
    /// then skips the stale entry). The work item that is taking completions on this thread runs it without a wake-up.
    /// </summary>
    internal void Post(IThreadPoolWorkItem completion, uint generation = 0)
    {
        _ready.Enqueue((completion, generation));
        EngineProbe.Current?.CompletionPosted(_ring);
        if (t_collecting != this)
        {
            Schedule();
        }
    }

    /// <summary>Queues the work item when none is queued or running: it polls the ring for the completions to come (any thread).</summary>
    internal void RequestDrain()
    {
        if (!HasDrains)
        {
            Schedule();
        }
    }

    private void Schedule()
    {
        if (Interlocked.CompareExchange(ref _requested, 1, 0) == 0)
        {
            System.Threading.ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
            Rescue.Requested();
        }
    }

    void IThreadPoolWorkItem.Execute()
    {
        Interlocked.Increment(ref _running);
        // Counted before the flag is cleared: a request made after that may set the flag again with its work item still
        // waiting in the pool, and counting it as served here would leave a starved pool without its rescue.
        long requestsSeen = Rescue.Requests;
        // Visible before the first look at the queue: a poster that saw a work item requested and queued none
        // relies on this run seeing its completion.
        Interlocked.Exchange(ref _requested, 0);
        Rescue.Started(requestsSeen);
        int start = Environment.TickCount;
        uint ranLong = 0; // one bit per continuation run, the latest lowest: which ran longer than the helper's threshold
        RingThread? outer = RingThread.EnterDrain(_ring);
        CompletionQueue? outerQueue = t_collecting;
        t_collecting = this;
        try
        {
            while (true)
            {
                if (!_ready.TryDequeue(out var entry) && !TakeMore(ref start, out entry))
                {
                    return;
                }
                Interlocked.Increment(ref _taken);
                if (BitOperations.PopCount(ranLong & RecentMask) >= EngineTunables.HelperAfterLongContinuations && !_ready.IsEmpty)
                {
                    Schedule(); // continuations that work: a helper runs the rest on another core
                }
                long started = System.Diagnostics.Stopwatch.GetTimestamp();
                Run(entry);
                ranLong = (ranLong << 1) | (System.Diagnostics.Stopwatch.GetTimestamp() - started >= s_helperAfterTicks ? 1u : 0u);
                // Behind continuations that work, waiting for the queue to run dry would leave the device idle; and the
                // run never holds back more requests than the device has in flight, or it runs short meanwhile.
                if (RingThread.HeldBackLong || (RingThread.HoldsBack && !_ready.IsEmpty && _ring.QueuedRegular > _ring.RegularInFlight))
                {
                    RingThread.ReleaseHeld();
                    _ring.Flush();
                }
                if (SliceLeft(ref start) == 0)
                {
                    return;
                }
            }
        }
        finally
        {
            t_collecting = outerQueue;
            RingThread.LeaveDrain(outer);
            RingThread.ReleaseHeld();
            _ring.Flush(); // what the last continuations started goes to the kernel now
            if (!_ready.IsEmpty || (_ring.RegularInFlight > 0 && Environment.TickCount - start >= EngineTunables.CompletionTimeSliceMilliseconds))
            {
                Schedule(); // a successor takes the rest, and polls after it, so the ring's thread stays parked
            }
            Interlocked.Decrement(ref _running);
            _ring.DrainEnded();
        }
    }

    // Run dry: submit what the continuations started, take what the kernel has ready, and while requests are in the
    // kernel wait for the next completion on this thread, for the rest of the time slice. False when nothing came (the
    // work item then returns).
    private bool TakeMore(ref int start, out (IThreadPoolWorkItem Item, uint Generation) entry)
    {
        RingThread.ReleaseHeld();
        // What the continuations started goes in with the wait for the next completion (TryPollForDrain), in one
        // io_uring_enter; only when this thread will not poll does it go in on its own.
        while (!_ready.TryDequeue(out entry))
        {
            int left = SliceLeft(ref start);
            if (left == 0 || !_ring.TryPollForDrain(left))
            {
                _ring.Flush();
                return _ready.TryDequeue(out entry);
            }
        }
        return true;
    }

    // Milliseconds left in this work item's time slice, or 0 when it gives its thread back. A slice that ends while no
    // other work item waits starts again: a successor would wake an idle pool thread, which spins before it sleeps.
    private static int SliceLeft(ref int start)
    {
        int left = EngineTunables.CompletionTimeSliceMilliseconds - (Environment.TickCount - start);
        if (left > 0)
        {
            return left;
        }
        if (System.Threading.ThreadPool.PendingWorkItemCount != 0)
        {
            return 0;
        }
        start = Environment.TickCount;
        return EngineTunables.CompletionTimeSliceMilliseconds;
    }

    /// <summary>
    /// The ring's thread, every <see cref="EngineTunables.ReaperCheckMilliseconds"/> while it is parked: when entries
    /// wait and none was taken since the last look, the work item that should take them is stuck in a continuation
    /// (one that blocks); a helper takes the rest.
    /// </summary>
    internal void HelpIfStuck()
    {
        long taken = Interlocked.Read(ref _taken);
        if (!_ready.IsEmpty && taken == _takenAtLastLook)
        {
            Schedule(); // no-op while a work item waits to start: a starved pool is the rescue's (StarvedPoolRescue)
        }
        _takenAtLastLook = taken;
    }

    private static void Run((IThreadPoolWorkItem Item, uint Generation) entry)
    {
        if (entry.Item is RingOperation operation)
        {
            operation.RunQueued(entry.Generation);
        }
        else
        {
            entry.Item.Execute(); // an exception here is the user's: it ends the process, as on any pool thread
        }
    }
}
