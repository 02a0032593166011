namespace Spindle.Engines.IoUring;

/// <summary>
/// The backstop for a pool that cannot start the completion queue's work item (every pool thread blocked, say in
/// <c>ReadAsync(...).AsTask().Result</c> on a capped pool). A watch thread, asleep while no work item waits, checks every
/// <see cref="EngineTunables.StarvedPoolMilliseconds"/> whether the one it saw requested still waits; then a rescue
/// thread runs the queue in a clean execution context (one kept thread, or a one-off while that one is busy).
/// </summary>
internal sealed class StarvedPoolRescue
{
    private static readonly AsyncLocal<bool> s_marker = new();

    private static readonly ParameterizedThreadStart s_runKept = static state => ((StarvedPoolRescue)state!).Run(once: false);
    private static readonly ParameterizedThreadStart s_runOnce = static state => ((StarvedPoolRescue)state!).Run(once: true);

    private readonly IThreadPoolWorkItem _drain;
    private readonly SemaphoreSlim _runnerWake = new(0); // wakes the kept rescue thread
    private int _runnerIdle;                             // 1 while the kept rescue thread waits for work
    private bool _runnerStarted;                         // whether it exists (the watch thread alone reads and sets this)
    private readonly SemaphoreSlim _wake = new(0);
    private ExecutionContext? _clean;   // a context with nothing of the user's in it
    private int _parked = 1;            // 1 while the watch thread sleeps (or was never started)
    private bool _started;
    private long _requests;             // work items requested so far (by CompletionQueue)
    private long _served;               // the requests counted when a work item last started: all of them were served

    internal StarvedPoolRescue(IThreadPoolWorkItem drain) => _drain = drain;

    /// <summary>A work item was queued to the pool.</summary>
    internal void Requested()
    {
        Interlocked.Increment(ref _requests);
        if (Volatile.Read(ref _parked) != 0 && Interlocked.Exchange(ref _parked, 0) != 0)
        {
            Wake();
        }
    }

    /// <summary>The work items requested so far.</summary>
    internal long Requests => Volatile.Read(ref _requests);

    /// <summary>A work item started, having read <see cref="Requests"/> before it cleared the request flag: those are served.</summary>
    internal void Started(long requestsSeen) => Volatile.Write(ref _served, requestsSeen);

    // Called only when the watch parked (after a quiet while), so a lock each time costs nothing.
    private void Wake()
    {
        lock (_wake)
        {
            if (_started)
            {
                _wake.Release();
                return;
            }
            try
            {
                new Thread(static state => ((StarvedPoolRescue)state!).Watch()) { IsBackground = true, Name = "Spindle io_uring rescue watch" }.UnsafeStart(this);
                _started = true;
            }
            catch (OutOfMemoryException)
            {
                Volatile.Write(ref _parked, 1); // no thread now (limits): the next request tries again
            }
        }
    }

    private void Watch()
    {
        s_marker.Value = true; // started without flow: the captured context holds only this marker
        _clean = ExecutionContext.Capture();
        int quiet = 0;
        while (true)
        {
            long served = Volatile.Read(ref _served);
            long requests = Volatile.Read(ref _requests);
            if (requests == served && ++quiet >= EngineTunables.StarvedPoolQuietChecks)
            {
                Volatile.Write(ref _parked, 1);
                Interlocked.MemoryBarrier();
                // A request after the look above saw us parked and releases the semaphore; one before it is counted.
                if (Volatile.Read(ref _requests) == requests || Interlocked.Exchange(ref _parked, 0) == 0)
                {
                    _wake.Wait();
                }
                quiet = 0;
                continue;
            }
            if (requests != served)
            {
                quiet = 0;
            }
            Thread.Sleep(EngineTunables.StarvedPoolMilliseconds);
            if (requests != served && Volatile.Read(ref _served) == served)
            {
                Rescue();
            }
        }
    }

    // The kept rescue thread runs the queue when woken (a pool that stalls now and then costs no new thread); a new
    // thread runs it once only while that one is busy.
    private void Rescue()
    {
        if (Interlocked.Exchange(ref _runnerIdle, 0) == 1)
        {
            _runnerWake.Release();
            return;
        }
        bool keep = !_runnerStarted; // the first rescue thread is kept; later ones, while it is busy, run once
        try
        {
            new Thread(keep ? s_runKept : s_runOnce) { IsBackground = true, Name = "Spindle io_uring rescue" }.UnsafeStart(this);
            _runnerStarted |= keep;
        }
        catch (OutOfMemoryException)
        {
            // No thread now: the next tick tries again.
        }
    }

    private void Run(bool once)
    {
        Thread thread = Thread.CurrentThread;
        while (true)
        {
            ExecutionContext.Run(_clean!, static drain => ((IThreadPoolWorkItem)drain!).Execute(), _drain);
            if (once)
            {
                return;
            }
            // What the pool resets after a work item, reset by hand (ExecutionContext.Run restored the contexts).
            thread.IsBackground = true;
            thread.Priority = ThreadPriority.Normal;
            Volatile.Write(ref _runnerIdle, 1);
            _runnerWake.Wait();
        }
    }
}
