using System.Collections.Concurrent;
using System.Numerics;
using Spindle.Diagnostics;

namespace Spindle.Engines.IoUring;

/// <summary>
/// Completed operations whose continuations wait for a pool thread, and the one work item that runs them, as the
/// runtime's socket engine hands epoll's events to the pool: a reaper posts, and queues the work item only when none is
/// queued. What the continuations start is submitted together when the queue runs dry or after a short window. A
/// helper work item is queued only when continuations work or one blocks (each costs a wake-up). Run dry, the work item
/// polls the ring itself while its requests are in flight, so the thread that reaps runs the continuations; it returns
/// when the kernel has nothing for it, or after its time slice when other work items wait for the pool.
/// </summary>
internal sealed class CompletionQueue : IThreadPoolWorkItem
{
    // The queue whose work item runs on this thread now: what it reaps, it runs.
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
    /// Queues a completion (any thread; never blocks or runs user code). The entry carries the operation's
    /// <paramref name="generation"/>, so a stale one (a waiter took the operation first) is skipped.
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
        // Counted before the flag is cleared: a request made after may still wait in the pool, and needs its rescue.
        long requestsSeen = Rescue.Requests;
        // Visible before the first look at the queue: a poster that saw the flag set relies on this run seeing its entry.
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
                // Held requests go in when the window closed, or when more wait than the device has in flight.
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

    // Run dry: while requests are in flight, wait for the next completion on this thread for the rest of the slice
    // (submitting what the continuations started in the same enter). False when nothing came.
    private bool TakeMore(ref int start, out (IThreadPoolWorkItem Item, uint Generation) entry)
    {
        RingThread.ReleaseHeld();
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

    // Milliseconds left in this work item's slice, or 0 when it gives its thread back. With no other work item waiting
    // the slice starts again: a successor would wake an idle pool thread.
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

    /// <summary>The parked ring's thread, at each look: entries wait and none was taken since the last look (a continuation blocks), so a helper takes them.</summary>
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
