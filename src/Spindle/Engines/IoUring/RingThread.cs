using Spindle.Diagnostics;
using Spindle.Interop;
using static Spindle.Interop.IoUringConstants;

namespace Spindle.Engines.IoUring;

/// <summary>
/// Who drives the ring (<see cref="RingDriver"/>) and when. Any thread may drive it while it holds the gate, which is
/// never held in a blocking call or user code. One thread at a time polls (waits in <c>io_uring_enter</c> and reaps):
/// the pool thread running this ring's continuations, so that the thread that reaps runs them (as tokio's workers do);
/// or a thread waiting in <c>GetResult</c>; otherwise the ring's own thread, the backstop, which parks while another
/// polls and looks now and then for completions nobody took (a continuation that blocks).
/// </summary>
internal sealed unsafe class RingThread
{
    private const ulong WakeTag = ulong.MaxValue;       // user data of the standing eventfd read

    private static readonly long s_batchWindowTicks = System.Diagnostics.Stopwatch.Frequency * EngineTunables.BatchWindowMicroseconds / 1_000_000;

    // When the run of continuations on this thread first held back a request (Stopwatch ticks), or 0.
    [ThreadStatic]
    private static long t_heldSince;

    // The ring this thread drives while running continuations (CompletionQueue), if any: its submissions wait for the end of the run.
    [ThreadStatic]
    private static RingThread? t_draining;

    private readonly Lock _gate = new();             // held by whoever drives the ring (never across a blocking call)
    private RingDriver _driver = null!;
    private int _wakeFd = -1;            // eventfd that callers write to wake the thread
    private ulong* _wakeBuffer;          // where the standing eventfd read puts the counter
    private bool _wakeArmed;             // whether the eventfd read is on the ring (under the gate)
    private int _poller;                 // 1 while a thread holds the polling role
    private int _inKernel;               // 1 while the poller is (about to be) blocked in io_uring_enter
    private bool _ringThreadPolls;       // whether the poller is the ring's own thread
    private int _parked;                 // 1 while the ring's thread waits off the ring for another poller to leave
    private long _progress;              // passes that reaped or submitted, by any thread (the parked ring's thread looks whether they move)
    private long _progressAtPark;
    private bool _watching;              // the ring's thread woke from a park for a look, not for a wake-up
    private int _lookMilliseconds = EngineTunables.ReaperCheckMilliseconds; // how long the next park lasts before a look
    private readonly ManualResetEventSlim _park = new(false, spinCount: 0); // no spinning: a parked thread costs nothing
    private int _flushWanted;            // 1 when a thread found the gate taken: its holder drives again before it leaves
    private readonly System.Collections.Concurrent.ConcurrentQueue<RingOperation> _inline = new(); // inline completions, run by the reaper after the gate

    internal RingThread() => Completions = new CompletionQueue(this);

    /// <summary>Where completed operations' continuations run: the thread pool, one work item per batch.</summary>
    internal CompletionQueue Completions { get; }

    /// <summary>The thread's id (the kernel's), once it started: its io-wq workers are named after it.</summary>
    internal int ThreadId { get; private set; }

    /// <summary>How many io-wq workers may wait at once for requests that can block (0 when the kernel would not say).</summary>
    internal uint BoundWorkerLimit { get; private set; }

    /// <summary>The setup flags the kernel accepted (for diagnostics).</summary>
    internal uint SetupFlags => _driver.SetupFlags;

    /// <summary>How many completions the CQ ring holds.</summary>
    internal uint CqEntries => _driver.CqEntries;

    /// <summary>How many operations that may wait for ever can be in the kernel at once.</summary>
    internal int BlockingBudget => _driver.BlockingBudget;

    /// <summary>Starts the thread and waits until it has set up the ring, or failed to (<paramref name="errno"/> says why).</summary>
    /// <exception cref="OutOfMemoryException">The thread could not be created.</exception>
    internal bool Start(IoUringEngine engine, out int errno)
    {
        int error = 0;
        bool ready = false;
        using var started = new ManualResetEventSlim();
        var thread = new Thread(() =>
        {
            // The eventfd first: when the ring then fails, closing it is all there is to undo.
            int wakeFd = Libc.EventFd(0, EFD_CLOEXEC);
            Ring? ring = null;
            if (wakeFd < 0)
            {
                error = Errno.Last;
            }
            else if ((ring = Ring.TryCreate(EngineTunables.RingSqEntries, out error)) is null)
            {
                Libc.Close(wakeFd);
            }
            ready = ring is not null;
            if (ready)
            {
                BoundWorkerLimit = ring!.RaiseBoundWorkers(EngineTunables.BoundWorkers);
                _driver = new RingDriver(engine, ring!);
                _wakeFd = wakeFd;
                _wakeBuffer = (ulong*)System.Runtime.InteropServices.NativeMemory.AlignedAlloc(8, 8);
                ThreadId = Libc.GetTid();
            }
            started.Set();
            if (ready)
            {
                Run();
            }
        })
        {
            IsBackground = true,
            Name = "Spindle io_uring",
        };
        thread.UnsafeStart();
        started.Wait();
        errno = error;
        return ready;
    }

    /// <summary>
    /// Starts a prepared operation (any thread): submitted at once with whatever else waits, unless a submission is due
    /// soon anyway (the run of continuations on this thread, or the reaper of a file request in flight).
    /// </summary>
    internal void Submit(RingOperation operation)
    {
        _driver.Queue(operation);
        if (operation.Inline || operation.MayBlock)
        {
            NeedsPoller();
        }
        if (operation.WaitsInWorker)
        {
            WakeRingThread(); // the ring's thread places it (RingDriver)
            return;
        }
        if (!operation.MayBlock)
        {
            // Pairs with the fence between reaping and placing (DriveOnce): either the reaper of the completion in
            // flight sees this request, or we see that nothing is in flight and submit it ourselves.
            Interlocked.MemoryBarrier();
            if (HoldForRun())
            {
                return; // the run of continuations submits it with the others it starts (CompletionQueue)
            }
            if (_driver.RegularInFlight > 0 && _driver.Queued < EngineTunables.SubmitBatch)
            {
                return; // the thread that reaps the next completion submits it, with whatever gathered meanwhile
            }
        }
        Flush(runInline: false);
    }

    /// <summary>
    /// Submits what a batch queued (<see cref="Queue"/>): with the run of continuations on this thread when there is one,
    /// else at once. <paramref name="regularOnly"/>: the batch queued nothing that may block for ever (never held).
    /// </summary>
    internal void SubmitQueued(bool regularOnly)
    {
        // No fence here, unlike Submit: a held batch is submitted by this same thread's run, and Flush fences its own.
        if (regularOnly && HoldForRun())
        {
            return;
        }
        if (!regularOnly)
        {
            NeedsPoller();
        }
        Flush(runInline: false);
    }

    // On a thread running this ring's continuations: the run submits what was queued, within the batch window.
    private bool HoldForRun()
    {
        if (t_draining != this)
        {
            return false;
        }
        if (t_heldSince == 0)
        {
            t_heldSince = System.Diagnostics.Stopwatch.GetTimestamp();
        }
        return true;
    }

    /// <summary>Whether the run of continuations on this thread has held back a request for <see cref="EngineTunables.BatchWindowMicroseconds"/>.</summary>
    internal static bool HeldBackLong => t_heldSince != 0 && System.Diagnostics.Stopwatch.GetTimestamp() - t_heldSince >= s_batchWindowTicks;

    /// <summary>Whether the run of continuations on this thread holds back a request now.</summary>
    internal static bool HoldsBack => t_heldSince != 0;

    /// <summary>What the run of continuations on this thread held back has been submitted.</summary>
    internal static void ReleaseHeld() => t_heldSince = 0;

    /// <summary>Queues a prepared operation without submitting it: a batch queues all of its operations, then calls <see cref="SubmitQueued"/> once.</summary>
    internal void Queue(RingOperation operation) => _driver.Queue(operation);

    /// <summary>Queues a cancellation (any thread, from the token's callback) and sends it to the kernel.</summary>
    internal void RequestCancel(RingOperation operation, uint generation)
    {
        _driver.EnqueueCancel(operation, generation);
        Flush(runInline: false);
    }

    /// <summary>
    /// Drives the ring once without blocking (or leaves it to the thread driving it now, which drives again before it
    /// lets go); returns the completions taken here. Not <paramref name="runInline"/> inside a call that starts an
    /// operation: an inline callback that waits for that operation would wait for ever.
    /// </summary>
    internal int Flush(bool runInline = true)
    {
        int taken = 0;
        while (true)
        {
            if (!_gate.TryEnter())
            {
                Volatile.Write(ref _flushWanted, 1);
                // Pairs with the holder's fence after it lets go: either it sees the wish, or we see the gate free.
                Interlocked.MemoryBarrier();
                if (!_gate.TryEnter())
                {
                    break; // its holder drives the ring again before it leaves
                }
            }
            bool again;
            try
            {
                Volatile.Write(ref _flushWanted, 0);
                taken += DriveOnce();
                again = _driver.CanPlaceMore() || _driver.Unsubmitted > 0; // retries, requests queued meanwhile, an enter the kernel refused for now
            }
            finally
            {
                _gate.Exit();
            }
            if (runInline)
            {
                RunInline();
            }
            Interlocked.MemoryBarrier();
            if (!again && Volatile.Read(ref _flushWanted) == 0)
            {
                break;
            }
        }
        if (_driver.WaitsForRingThread)
        {
            WakeRingThread(); // requests for io-wq workers, and reissues, go in from the ring's thread only
        }
        else if (!runInline && !_inline.IsEmpty && !KickPoller())
        {
            WakeParked(); // whoever polls runs the inline completions left here
        }
        return taken;
    }

    // Under the gate: reap, place, submit without waiting, and again while the submission completed something at once.
    private int DriveOnce()
    {
        int taken = 0;
        while (true)
        {
            taken += ReapAndPlace();
            if (_driver.Unsubmitted == 0)
            {
                return taken;
            }
            _progress++;
            _driver.Submit();
            if (!_driver.HasCompletion)
            {
                return taken;
            }
        }
    }

    // Under the gate: take what the kernel has ready, then place what is queued.
    private int ReapAndPlace()
    {
        int taken = _driver.Reap(WakeTag, out bool wake);
        if (taken > 0)
        {
            _progress++;
        }
        if (wake)
        {
            // Whoever reaped the wake-up puts the read back at once: a caller's next eventfd write must find one to wake the thread.
            _wakeArmed = _driver.TryPlaceRead(_wakeFd, _wakeBuffer, sizeof(ulong), WakeTag);
        }
        Interlocked.MemoryBarrier(); // see Submit
        _driver.Fill();
        return taken;
    }

    /// <summary>Completes an operation (under the gate): to its waiter, the inline queue, or the thread pool.</summary>
    internal void Deliver(RingOperation operation)
    {
        if (operation.TryHandToWaiter())
        {
            return;
        }
        if (operation.Inline)
        {
            _inline.Enqueue(operation);
            return;
        }
        Completions.Post(operation, operation.Generation);
    }

    // Inline completions run on the thread that reaped them, once it let go of the gate. Never inlined: tests tell a
    // callback run here from one handed to the pool by this frame.
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    private void RunInline()
    {
        while (_inline.TryDequeue(out RingOperation? operation))
        {
            operation.RunQueued(operation.Generation);
        }
    }

    /// <summary>Marks this thread as running <paramref name="ring"/>'s continuations: what they submit waits for the end of the run (<see cref="CompletionQueue"/>).</summary>
    internal static RingThread? EnterDrain(RingThread ring)
    {
        RingThread? outer = t_draining;
        t_draining = ring;
        return outer;
    }

    /// <summary>Ends what <see cref="EnterDrain"/> began.</summary>
    internal static void LeaveDrain(RingThread? outer) => t_draining = outer;

    /// <summary>Regular-file and block-device requests in the kernel now (any thread; a snapshot).</summary>
    internal int RegularInFlight => _driver.RegularInFlight;

    /// <summary>Regular-file and block-device requests queued and not yet placed (any thread; a snapshot).</summary>
    internal int QueuedRegular => _driver.Queued;

    // Regular-file and block-device requests in the kernel or waiting to go in: each will complete soon.
    private bool HasRegularWork => _driver.RegularInFlight > 0 || _driver.Queued > 0;

    /// <summary>
    /// The run of continuations, run dry, waits in the kernel for the next completion (at most <paramref name="milliseconds"/>)
    /// and reaps it itself, while regular-file requests (each completes soon) are in flight. True when it took completions.
    /// </summary>
    internal bool TryPollForDrain(int milliseconds)
    {
        if (!HasRegularWork || !_driver.CanWaitWithTimeout)
        {
            return false;
        }
        if (!TryAcquirePoller())
        {
            return Volatile.Read(ref _ringThreadPolls) && WaitBesideRingThread(milliseconds);
        }
        try
        {
            while (!Poll(milliseconds * 1_000_000L, null, 0, out bool timedOut))
            {
                if (timedOut || !HasRegularWork)
                {
                    return false; // the device is slower than the time left, or another thread took the completions
                }
            }
            return true;
        }
        finally
        {
            Volatile.Write(ref _poller, 0); // no hand-off: this drain is still running, and wakes the ring's thread when it ends
        }
    }

    /// <summary>
    /// A continuation was registered for a request in flight: a run of continuations is queued now, during the I/O, to
    /// reap it (one wake-up while the device works instead of two in a row after it).
    /// </summary>
    internal void Awaited()
    {
        if (t_draining == this)
        {
            return;
        }
        Completions.RequestDrain();
        // The awaiting thread starts nothing more for now: what it left for the reaper goes in unless fewer wait than are in flight.
        int queued = _driver.Queued;
        if (queued > 0 && queued >= _driver.RegularInFlight)
        {
            Flush(runInline: false);
        }
    }

    // The ring's thread polls: this run waits in the kernel beside it; whichever takes the gate first reaps, and the
    // ring's thread then parks and leaves the role to the run.
    private bool WaitBesideRingThread(int milliseconds)
    {
        if (!_driver.HasCompletion)
        {
            _driver.SubmitAndWait(0, milliseconds * 1_000_000L);
        }
        return Flush() > 0;
    }

    /// <summary>A thread waits in <c>GetResult</c>: it polls the ring itself when <paramref name="mayPoll"/> and nobody else polls; else it sleeps until handed the result.</summary>
    internal void WaitFor(IRingWaitable waited, short token, bool mayPoll)
    {
        EngineProbe.Current?.Waiting(this, 1);
        if (!mayPoll || !TryPollUntilCompleted(waited, token))
        {
            Flush();
            waited.WaitUntilCompleted(token);
        }
        EngineProbe.Current?.Waiting(this, -1);
    }

    // Polls the ring until waited completed; false when another thread polls (that one hands it the result).
    private bool TryPollUntilCompleted(IRingWaitable waited, short token)
    {
        if (!TryAcquirePoller())
        {
            return false;
        }
        waited.HandOff.WaiterPolls = true;
        try
        {
            while (!waited.HasCompleted(token))
            {
                Poll(-1, waited, token, out _);
            }
        }
        finally
        {
            waited.HandOff.WaiterPolls = false;
            // A waiter that leaves an idle ring leaves the ring's thread parked (waking it for nothing costs two switches
            // per read); a request that needs a poller wakes it when it starts (NeedsPoller).
            Volatile.Write(ref _poller, 0);
            // Pairs with NeedsPoller's fence: either it sees the role free, or this thread sees its request.
            Interlocked.MemoryBarrier();
            if (_driver.HasRequests || !_inline.IsEmpty)
            {
                DrainEnded();
            }
        }
        return true;
    }

    // An inline request, or one that may wait for ever, needs a poller: the ring's thread is woken when nobody polls.
    private void NeedsPoller()
    {
        Interlocked.MemoryBarrier();
        if (Volatile.Read(ref _poller) == 0 && !Completions.HasDrains)
        {
            WakeParked();
        }
    }

    /// <summary>Called by the thread that ran a continuation run's last step: the ring's thread takes the polling role again when nobody else will.</summary>
    internal void DrainEnded()
    {
        Interlocked.MemoryBarrier(); // pairs with the ring thread's look at the drains before it parks
        if (!Completions.HasDrains)
        {
            WakeParked();
        }
    }

    private bool TryAcquirePoller() => Interlocked.CompareExchange(ref _poller, 1, 0) == 0;

    // The poller: drive the ring; when nothing was ready, wait in the kernel at most timeoutNanoseconds (negative: until
    // a completion or a kick), then reap. True when completions were taken.
    private bool Poll(long timeoutNanoseconds, IRingWaitable? waitedFor, short token, out bool timedOut)
    {
        timedOut = false;
        int taken = Prepare(out uint toSubmit);
        RunInline();
        if (taken > 0)
        {
            Flush(); // submits what Prepare placed
            return true;
        }
        Volatile.Write(ref _inKernel, 1);
        // Pairs with KickPoller's fence: either they see us in the kernel, or we see their work.
        Interlocked.MemoryBarrier();
        // A drain waits only for regular requests (the entries Prepare dropped may have been all: requests their waiters took).
        bool worthWaiting = waitedFor is null ? HasRegularWork : !waitedFor.HasCompleted(token);
        if (worthWaiting && !_driver.HasCompletion && Volatile.Read(ref _flushWanted) == 0)
        {
            timedOut = !_driver.SubmitAndWait(toSubmit, timeoutNanoseconds);
        }
        Volatile.Write(ref _inKernel, 0);
        return Flush() > 0;
    }

    // Under the gate: reap and place, publishing the SQEs so that the wait that follows submits them (one enter per round).
    private int Prepare(out uint toSubmit)
    {
        lock (_gate)
        {
            Volatile.Write(ref _flushWanted, 0);
            int taken = ReapAndPlace();
            toSubmit = _driver.Publish();
            return taken;
        }
    }

    /// <summary>Wakes the polling thread out of the kernel (another thread took what it waits for); false when none is there.</summary>
    internal bool KickPoller()
    {
        // Pairs with the fences in Poll and WaitAsPoller: either the poller sees our item, or we see it in the kernel.
        Interlocked.MemoryBarrier();
        if (Volatile.Read(ref _inKernel) != 0 && Interlocked.Exchange(ref _inKernel, 0) != 0)
        {
            ulong one = 1;
            Libc.Write(_wakeFd, (byte*)&one, sizeof(ulong));
            return true;
        }
        return false;
    }

    // The ring's own thread must run (requests for io-wq workers): wherever it sleeps.
    private void WakeRingThread()
    {
        Interlocked.MemoryBarrier();
        if (Volatile.Read(ref _ringThreadPolls))
        {
            KickPoller();
            return;
        }
        WakeParked();
    }

    private void WakeParked()
    {
        if (Volatile.Read(ref _parked) != 0 && Interlocked.Exchange(ref _parked, 0) != 0)
        {
            _park.Set();
        }
    }

    /// <summary>
    /// The ring thread's loop: drive the ring, then poll; or, while another thread polls, park, looking now and then
    /// (<see cref="EngineTunables.ReaperCheckMilliseconds"/>, doubling while that thread keeps up) for completions nobody took.
    /// </summary>
    private void Run()
    {
        while (true)
        {
            try
            {
                if (_watching)
                {
                    _watching = false;
                    bool nobodyTook = (_driver.HasCompletion || _driver.Queued > 0) && Volatile.Read(ref _progress) == _progressAtPark;
                    if (!nobodyTook)
                    {
                        // The thread that polls keeps up: look less often.
                        _lookMilliseconds = Math.Min(_lookMilliseconds * 2, EngineTunables.ReaperCheckMaxMilliseconds);
                        Park();
                        continue;
                    }
                    _lookMilliseconds = EngineTunables.ReaperCheckMilliseconds;
                }
                bool busy;
                lock (_gate)
                {
                    Volatile.Write(ref _flushWanted, 0);
                    _driver.OnRingThread = true;
                    DriveOnce();
                    if (!_wakeArmed)
                    {
                        _wakeArmed = _driver.TryPlaceRead(_wakeFd, _wakeBuffer, sizeof(ulong), WakeTag);
                        if (_driver.Unsubmitted > 0)
                        {
                            _driver.Submit();
                        }
                    }
                    busy = _driver.CanPlaceMore() || _driver.Unsubmitted > 0;
                    _driver.OnRingThread = false;
                }
                RunInline();
                if (busy)
                {
                    continue;
                }
                if (!Completions.HasDrains && TryAcquirePoller())
                {
                    WaitAsPoller();
                }
                else
                {
                    Park();
                }
            }
            catch (Exception e)
            {
                // Nothing may kill this thread: operations in flight depend on it.
                Console.Error.WriteLine($"Spindle io_uring thread: {e}");
                System.Threading.Thread.Sleep(1);
            }
        }
    }

    // The ring's thread holds the polling role: block until a completion (the kernel's, or the eventfd read's).
    private void WaitAsPoller()
    {
        Volatile.Write(ref _ringThreadPolls, true);
        Volatile.Write(ref _inKernel, 1);
        // Pairs with the callers' fences: either they see the thread in the kernel and wake it, or it sees their requests.
        Interlocked.MemoryBarrier();
        if (!_driver.HasCompletion && Volatile.Read(ref _flushWanted) == 0 && !_driver.WaitsForRingThread && _inline.IsEmpty)
        {
            EngineProbe.Current?.Sleeping(this, true);
            _driver.Wait();
            EngineProbe.Current?.Sleeping(this, false);
        }
        Volatile.Write(ref _inKernel, 0);
        Volatile.Write(ref _ringThreadPolls, false);
        Volatile.Write(ref _poller, 0);
    }

    // Another thread polls or will (a pool thread running continuations): wait off the ring until it leaves.
    private void Park()
    {
        _park.Reset(); // a late Set of an earlier park wakes the thread once more, which looks again: harmless
        Volatile.Write(ref _parked, 1);
        // Pairs with DrainEnded and Flush: either they see the thread parked, or it sees their change.
        Interlocked.MemoryBarrier();
        bool nobodyPolls = Volatile.Read(ref _poller) == 0 && !Completions.HasDrains;
        if (nobodyPolls || Volatile.Read(ref _flushWanted) != 0 || _driver.WaitsForRingThread || !_inline.IsEmpty)
        {
            Volatile.Write(ref _parked, 0);
            return;
        }
        // Always a look after a while: the thread that polls may be stuck in a continuation (a blocking pipe write).
        _progressAtPark = Volatile.Read(ref _progress);
        _watching = !_park.Wait(_lookMilliseconds);
        if (_watching)
        {
            Completions.HelpIfStuck();
        }
        else
        {
            _lookMilliseconds = EngineTunables.ReaperCheckMilliseconds; // woken: the next park starts looking soon again
        }
        Volatile.Write(ref _parked, 0);
    }
}
