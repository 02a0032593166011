namespace Spindle.Engines.IoUring;

/// <summary>
/// Who completes a ring request's (or batch's) task once the kernel is done: the reaper, for a thread waiting in
/// <c>GetResult</c> (no user code runs then); else whoever takes the queued entry first. Each step is one
/// compare-and-swap, so exactly one thread completes each use.
/// </summary>
internal struct CompletionHandOff
{
    private const int InFlight = 0;     // nobody waits synchronously: the reaper queues it
    private const int Waited = 1;       // a thread waits in GetResult: the reaper completes it and wakes that thread
    private const int Queued = 2;       // done and queued: whoever takes the entry first completes the task
    private const int Taken = 3;        // completed (or being completed) by whoever took it

    private int _state;

    /// <summary>Whether the waiting thread polls the ring now: whoever completes it elsewhere kicks it out of the kernel.</summary>
    internal volatile bool WaiterPolls;

    /// <summary>What a thread that asks for the result before completion does.</summary>
    internal enum Wait
    {
        Pending,        // wait (poll the ring, or sleep): the reaper hands the result over
        TakeQueued,     // done and queued, now taken by the waiter: complete the task here
        BeingCompleted, // another thread completes it right now
    }

    /// <summary>Starts a use: nobody waits yet.</summary>
    internal void Reset() => _state = InFlight;

    /// <summary>The reaper: true when a thread waits in <c>GetResult</c> (complete it, and kick it when <paramref name="waiterPolls"/>); false when marked queued.</summary>
    internal bool TryHandToWaiter(out bool waiterPolls)
    {
        waiterPolls = false;
        if (Interlocked.CompareExchange(ref _state, Queued, InFlight) == InFlight)
        {
            return false;
        }
        _state = Taken;
        waiterPolls = WaiterPolls;
        return true;
    }

    /// <summary>Whoever runs a queued entry: true when it takes the task to complete; false when a waiter took it first.</summary>
    internal bool TryTakeQueued() => Interlocked.CompareExchange(ref _state, Taken, Queued) == Queued;

    /// <summary>A thread asks for the result before completion.</summary>
    internal Wait BeginWait() => Interlocked.CompareExchange(ref _state, Waited, InFlight) switch
    {
        InFlight => Wait.Pending,
        Queued when TryTakeQueued() => Wait.TakeQueued,
        _ => Wait.BeingCompleted,
    };

    /// <summary>Waits out <see cref="Wait.BeingCompleted"/>: another thread is between taking the task and completing it.</summary>
    internal static void SpinUntilCompleted(IRingWaitable waited, short token)
    {
        var spinner = default(SpinWait);
        while (!waited.HasCompleted(token))
        {
            spinner.SpinOnce();
        }
    }
}

/// <summary>What a thread waiting in <c>GetResult</c> polls the ring for (<see cref="RingThread.WaitFor"/>): a request, or a batch of them.</summary>
internal interface IRingWaitable
{
    /// <summary>Whether the task of <paramref name="token"/> has completed.</summary>
    bool HasCompleted(short token);

    /// <summary>Blocks the calling thread until the task of <paramref name="token"/> has completed.</summary>
    void WaitUntilCompleted(short token);

    /// <summary>Who completes it: the state its waiter polls for.</summary>
    ref CompletionHandOff HandOff { get; }
}
