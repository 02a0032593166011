using System.Collections.Concurrent;
using Spindle.Diagnostics;
using Spindle.Interop;
using static Spindle.Interop.IoUringConstants;

namespace Spindle.Engines.IoUring;

/// <summary>
/// The one thread that owns the ring (the leader). It drains the queue of operations callers prepared
/// into SQEs, submits them all with one <c>io_uring_enter</c> that also waits for completions, and
/// completes the operations whose CQEs arrive. By default the leader runs their continuations itself
/// (no hop to another thread): a continuation that starts the next operation puts it on the ring and
/// submits it at once, and the next <c>io_uring_enter</c> waits, as fio does. Should a continuation
/// block or run long (1–2 ms), a watchdog takes the ring, gives the rest of that leader's batch to
/// <see cref="Completions"/> and hands the ring to a follower thread (or a new one); the old leader,
/// once its continuation returns, parks as a follower: user code can delay the ring and the other
/// completions by a millisecond, never stop them. With <see cref="InlineSwitch"/> set to false every
/// continuation runs on <see cref="Completions"/> instead. Callers never make a system call unless the thread sleeps, and then
/// one eventfd write wakes it (a standing read on the eventfd completes). At most as many SQEs are
/// in flight as the CQ ring has entries, so the CQ ring cannot overflow; further operations wait in
/// the queue. Operations that may wait for ever (pipes, sockets, character devices) have a lane and a
/// budget of their own (<see cref="PendingLane"/>; half the CQ ring) and the others never wait behind
/// them; a queued operation whose token is cancelled completes at once. The thread is a background
/// thread: process exit does not wait for it.
/// </summary>
internal sealed unsafe class RingThread
{
    private const uint Entries = 256;                   // SQ ring size (the CQ ring: Ring.CompletionEntries, or twice this on old kernels)
    private const ulong WakeTag = ulong.MaxValue;       // user data of the standing eventfd read
    private const ulong CancelTag = ulong.MaxValue - 1; // user data of ASYNC_CANCEL requests (their CQEs carry nothing we need)

    private readonly PendingLane _regular = new();   // regular files and block devices: always finish
    private readonly PendingLane _blocking = new();  // pipes, sockets, character devices: may wait for ever
    private readonly ConcurrentQueue<(IoUringOperation Operation, uint Generation)> _cancels = new(); // cancellation requests
    // Need another SQE (ring thread only); entries carry the generation as in PendingLane.
    private readonly Queue<(IoUringOperation Operation, uint Generation)> _retries = new();
    private (IoUringOperation Operation, uint Generation)? _carriedCancel;
    private IoUringEngine _engine = null!;

    /// <summary>The setup flags the kernel accepted (for diagnostics).</summary>
    internal uint SetupFlags => _ring.SetupFlags;

    /// <summary>
    /// Runs the continuations the leader does not run itself (inline completions switched off, or the
    /// rest of a batch after a hand-over), on Spindle's own threads rather than the thread pool: a
    /// completion must arrive even when every pool thread is blocked waiting for one.
    /// </summary>
    internal WorkerThreads Completions { get; } = WorkerThreads.CreateCompletionPort("Spindle io_uring completions");

    /// <summary>The AppContext switch that, set to false, runs every continuation on <see cref="Completions"/> (else the leader runs them itself).</summary>
    internal const string InlineSwitch = "Spindle.IoUringInlineCompletions";

    private readonly bool _inline;

    /// <param name="inline">Whether the leader runs continuations itself; null: the <see cref="InlineSwitch"/> switch decides.</param>
    internal RingThread(bool? inline = null)
        => _inline = inline ?? !(AppContext.TryGetSwitch(InlineSwitch, out bool on) && !on);
    private CompletionBatch _completed = null!;         // the current leader's batch of completed operations
    private long _sequence;                             // continuations the leaders ran (leader only)
    // (sequence << 2) | Running while the leader runs a continuation, | InRing while that continuation
    // submits straight to the ring; TakenOver once the watchdog handed the ring over.
    private long _continuation;
    private long _running;                              // the leader's current value of _continuation (leader only)
    private int _leaderThreadId;                        // managed id of the leader thread
    private const long Running = 1;
    private const long InRing = 2;
    private readonly bool _submitEach = !(AppContext.TryGetSwitch(SubmitEachSwitch, out bool each) && !each);

    // Up to this many SQEs in flight, a continuation's SQE is submitted at once (one enter each, as fio
    // does: the device is idle part of the time, and waiting for the rest of the batch costs latency);
    // deeper, the SQEs go together with the leader's next enter. Measured on a virtio disk with
    // `spindle bench` (Sweep rows, % of fio's IOPS): submitting each up to 32 in flight gave 72–80 %
    // at 16 and 32; with this limit 99–112 %, and 87–99 % at 8.
    private const int SubmitEachUpTo = 8;

    /// <summary>The AppContext switch that, set to false, batches the SQEs continuations start into the leader's next enter.</summary>
    internal const string SubmitEachSwitch = "Spindle.IoUringSubmitEach";
    private const long TakenOver = -2; // even: "no continuation running"
    private readonly SemaphoreSlim _followerWake = new(0);
    private int _parkedFollowers;                       // old leaders waiting to lead again
    private readonly SemaphoreSlim _watchdogWake = new(0);
    private int _watchdogParked;                        // 1 while the watchdog sleeps (no continuations lately)
    private volatile bool _watchdogRetired;             // the ring did not start: the watchdog ends
    // About 100 ms without a continuation parks the watchdog (it ticks every millisecond while
    // continuations run); the next continuation wakes it with one semaphore release.
    private const int QuietTicksBeforeParking = 100;


    private Ring _ring = null!;
    private int _wakeFd = -1;            // eventfd that callers write to wake the thread
    private ulong* _wakeBuffer;          // where the standing eventfd read puts the counter
    private bool _wakeArmed;             // whether the eventfd read is on the ring
    private int _sleeping;               // 1 while the thread is (about to be) blocked in io_uring_enter
    private int _inFlight;               // SQEs submitted whose CQEs have not been reaped (≤ CQ entries)
    private int _maxInFlight;            // the most SQEs ever in flight at once (for tests)

    /// <summary>The most SQEs ever in flight at once; never more than the CQ ring holds.</summary>
    internal int MaxInFlight => Volatile.Read(ref _maxInFlight);

    /// <summary>How many completions wait in the CQ ring, not reaped yet (test seam).</summary>
    internal uint ReadyCompletions => _ring.ReadyCompletions;

    /// <summary>How many completions the CQ ring holds.</summary>
    internal uint CqEntries => _ring.CqEntries;

    /// <summary>How many operations that may wait for ever can be in the kernel at once.</summary>
    internal int BlockingBudget => _blocking.Budget;

    /// <summary>
    /// Test seam (tests on a private engine only): while set, the thread leaves callers' operations in
    /// the pending queue, as when the ring has no room, so that a test can act on a queued operation.
    /// </summary>
    internal volatile bool HoldPending;

    /// <summary>Starts the thread and waits until it has set up the ring, or failed to (<paramref name="errno"/> says why).</summary>
    /// <exception cref="OutOfMemoryException">The thread could not be created.</exception>
    internal bool Start(IoUringEngine engine, out int errno)
    {
        _engine = engine;
        int error = 0;
        bool ready = false;
        using var started = new ManualResetEventSlim();
        if (_inline)
        {
            // Before the ring: a process out of descriptors may get no thread (OutOfMemoryException, for
            // the caller to retry later), and no ring may run without its watchdog.
            var watchdog = new Thread(WatchContinuations) { IsBackground = true, Name = "Spindle io_uring watchdog" };
            watchdog.UnsafeStart();
        }
        var thread = new Thread(() =>
        {
            // The eventfd first: when the ring then fails, closing it is all there is to undo.
            int wakeFd = Libc.EventFd(0, EFD_CLOEXEC);
            Ring? ring = null;
            if (wakeFd < 0)
            {
                error = Errno.Last;
            }
            else if ((ring = Ring.TryCreate(Entries, shared: _inline, out error)) is null)
            {
                Libc.Close(wakeFd);
            }
            ready = ring is not null;
            if (ready)
            {
                _ring = ring!;
                // Half the room for each class, less the reserve, which belongs to neither.
                _blocking.Budget = (int)ring!.CqEntries / 2;
                _regular.Budget = (int)ring.CqEntries - CancelReserve - _blocking.Budget;
                _wakeFd = wakeFd;
                _wakeBuffer = (ulong*)System.Runtime.InteropServices.NativeMemory.AlignedAlloc(8, 8);
            }
            started.Set();
            if (ready)
            {
                Lead();
            }
        })
        {
            IsBackground = true,
            Name = "Spindle io_uring",
        };
        try
        {
            thread.UnsafeStart();
            started.Wait();
        }
        finally
        {
            if (!ready)
            {
                RetireWatchdog();
            }
        }
        errno = error;
        return ready;
    }

    /// <summary>
    /// Starts a prepared operation (any thread). A continuation the leader runs puts it on the ring and
    /// submits it at once (one SQE per enter, as fio does: batching what the continuations of one
    /// pass start into the next enter measured slower on a virtio disk); everyone else queues it.
    /// </summary>
    internal void Submit(IoUringOperation operation)
    {
        PendingLane lane = LaneOf(operation);
        if (Volatile.Read(ref _running) != 0 && _submitEach && TrySubmitFromLeader(operation, lane))
        {
            return;
        }
        lane.Enqueue(operation);
        WakeIfSleeping();
    }

    private bool TrySubmitFromLeader(IoUringOperation operation, PendingLane lane)
    {
        // Read in this order: a leader publishes its thread id before its first _running.
        long running = Volatile.Read(ref _running);
        if (Environment.CurrentManagedThreadId != Volatile.Read(ref _leaderThreadId) || HoldPending || !lane.HasRoom || !lane.IsEmpty)
        {
            return false;
        }
        // Hold the ring: the watchdog never takes it from a leader inside it.
        if (Interlocked.CompareExchange(ref _continuation, running | InRing, running) != running)
        {
            return false; // handed over already: queue it for the new leader
        }
        bool placed = TryPlace(operation);
        if (placed && _inFlight <= SubmitEachUpTo && !_completed.RunningLast)
        {
            SpindleMetrics.Submission();
            _ring.Enter(0, wait: false);
        }
        // Otherwise the SQE goes with the leader's next enter: right after the batch's last
        // continuation that enter submits and waits in one system call (fio's shape at depth 1);
        // deeper than SubmitEachUpTo the device is busy anyway and one enter per SQE costs more.
        Volatile.Write(ref _continuation, running);
        return placed;
    }

    /// <summary>Queues a cancellation (any thread, from the token's callback).</summary>
    internal void RequestCancel(IoUringOperation operation, uint generation)
    {
        _cancels.Enqueue((operation, generation));
        WakeIfSleeping();
    }

    private void WakeIfSleeping()
    {
        // Pairs with the fence in Run: either the thread sees our item, or we see it sleeping.
        Interlocked.MemoryBarrier();
        if (Volatile.Read(ref _sleeping) != 0 && Interlocked.Exchange(ref _sleeping, 0) != 0)
        {
            ulong one = 1;
            Libc.Write(_wakeFd, (byte*)&one, sizeof(ulong));
        }
    }

    /// <summary>A leader's life: run the ring until handed over, then wait as a follower to lead again.</summary>
    private void Lead()
    {
        var batch = new CompletionBatch();
        while (true)
        {
            Run(batch);
            Interlocked.Increment(ref _parkedFollowers);
            _followerWake.Wait();
        }
    }

    /// <summary>
    /// Hands the ring to a parked follower or a new thread (watchdog, after taking it from the leader);
    /// false when there is neither (no thread could be created).
    /// </summary>
    private bool Promote()
    {
        int parked;
        while ((parked = Volatile.Read(ref _parkedFollowers)) > 0)
        {
            if (Interlocked.CompareExchange(ref _parkedFollowers, parked - 1, parked) == parked)
            {
                _followerWake.Release();
                return true;
            }
        }
        try
        {
            var thread = new Thread(Lead) { IsBackground = true, Name = "Spindle io_uring" };
            thread.UnsafeStart();
            return true;
        }
        catch (OutOfMemoryException)
        {
            return false;
        }
    }

    /// <summary>Ends the watchdog of a ring that did not start.</summary>
    private void RetireWatchdog()
    {
        _watchdogRetired = true;
        _watchdogWake.Release();
    }

    /// <summary>Completes an operation (ring thread): its continuation runs after this pass over the ring.</summary>
    internal void Deliver(IoUringOperation operation)
    {
        if (_inline)
        {
            _completed.Add(operation);
        }
        else
        {
            Completions.Queue(operation);
        }
    }

    /// <summary>
    /// Runs the batch's continuations on this thread. Returns false when the watchdog took the ring
    /// meanwhile: it gave the rest of the batch to the completion threads, and this thread must touch
    /// neither the ring nor the batch.
    /// </summary>
    private bool RunCompletions(CompletionBatch batch)
    {
        while (batch.TryClaim(out IoUringOperation operation))
        {
            long running = (++_sequence << 2) | Running;
            Volatile.Write(ref _running, running);
            // A full fence: pairs with the watchdog's before it parks (it sees us, or we see it parked).
            Interlocked.Exchange(ref _continuation, running);
            if (Volatile.Read(ref _watchdogParked) != 0 && Interlocked.Exchange(ref _watchdogParked, 0) != 0)
            {
                _watchdogWake.Release();
            }
            try
            {
                operation.CompleteTask();
            }
            catch (Exception e)
            {
                Console.Error.WriteLine($"Spindle io_uring continuation: {e}");
            }
            Volatile.Write(ref _running, 0);
            if (Interlocked.CompareExchange(ref _continuation, running & ~Running, running) != running)
            {
                return false;
            }
        }
        batch.Reset();
        return true;
    }

    /// <summary>
    /// Samples the leader about every millisecond while continuations run: one seen running at two
    /// samples in a row has had the ring for 1–2 ms, so the ring goes to another thread.
    /// </summary>
    private void WatchContinuations()
    {
        long last = 0;
        int quiet = 0;
        while (!_watchdogRetired)
        {
            System.Threading.Thread.Sleep(1);
            long now = Volatile.Read(ref _continuation);
            // Never while the leader is inside the ring (InRing): it leaves again at once.
            if ((now & (Running | InRing)) == Running && now == last)
            {
                if (Interlocked.CompareExchange(ref _continuation, TakenOver, now) == now)
                {
                    // The completions reaped beside the blocked one must not wait for it.
                    _completed.CloseAndTakeRest(Completions);
                    while (!Promote())
                    {
                        // No thread to be had (out of descriptors or memory): the old leader parks as a
                        // follower once its continuation returns, or a thread can be made later.
                        System.Threading.Thread.Sleep(1);
                    }
                }
                last = TakenOver;
                continue;
            }
            quiet = now == last ? quiet + 1 : 0;
            last = now;
            if (quiet < QuietTicksBeforeParking)
            {
                continue;
            }
            // No continuation for a while: sleep until the leader runs one.
            Volatile.Write(ref _watchdogParked, 1);
            Interlocked.MemoryBarrier();
            if (Volatile.Read(ref _continuation) != now && Interlocked.Exchange(ref _watchdogParked, 0) != 0)
            {
                quiet = 0;
                continue;
            }
            _watchdogWake.Wait();
            quiet = 0;
            last = 0;
        }
    }

    /// <summary>The leader's loop; returns when the watchdog handed the ring to another thread.</summary>
    private void Run(CompletionBatch batch)
    {
        batch.Reset(); // after a hand-over the watchdog took what was left in it
        _completed = batch;
        Volatile.Write(ref _leaderThreadId, Environment.CurrentManagedThreadId);
        while (true)
        {
            try
            {
                Reap();
                Fill();
                if (!batch.IsEmpty)
                {
                    if (!RunCompletions(batch))
                    {
                        return;
                    }
                    continue; // the continuations may have queued operations: place them first
                }
                bool wait = false;
                if (!_ring.HasCompletion && (_retries.Count == 0 || !HasRoomFor(_retries.Peek().Operation)))
                {
                    Volatile.Write(ref _sleeping, 1);
                    Interlocked.MemoryBarrier();
                    if (!CanPlaceMore())
                    {
                        // Nothing left that could go on the ring now: block until a completion
                        // (which frees room) or a caller's eventfd write.
                        wait = true;
                    }
                    else
                    {
                        Volatile.Write(ref _sleeping, 0);
                        if (_ring.Unsubmitted == 0)
                        {
                            continue;
                        }
                    }
                }
                Enter(wait);
            }
            catch (Exception e)
            {
                // Nothing may kill this thread: operations in flight depend on it.
                Console.Error.WriteLine($"Spindle io_uring thread: {e}");
                System.Threading.Thread.Sleep(1);
            }
        }
    }

    private void Enter(bool wait)
    {
        uint unsubmitted = _ring.Unsubmitted;
        int result = _ring.Enter(1, wait);
        Volatile.Write(ref _sleeping, 0);
        if (unsubmitted > 0 || wait)
        {
            SpindleMetrics.Submission();
        }
        if (result >= 0 || result == -Errno.EINTR)
        {
            return;
        }
        // EAGAIN/EBUSY: the kernel cannot take more now; reaping completions frees what it needs.
        if (!_ring.HasCompletion)
        {
            System.Threading.Thread.Yield();
        }
    }

    // Operations may fill the CQ ring only up to this reserve, so that cancellations (and the eventfd
    // read) always find room: otherwise a ring full of reads on silent pipes could never be cancelled.
    private const int CancelReserve = 32;

    private PendingLane LaneOf(IoUringOperation operation) => operation.MayBlock ? _blocking : _regular;

    // The lanes' budgets add up to the CQ ring less the reserve, so operations never take the reserve.
    private bool HasRoomFor(IoUringOperation operation) => LaneOf(operation).HasRoom;

    private bool HasRoomForCancel => _inFlight < _ring.CqEntries;

    private bool CanPlaceMore()
        => (_retries.Count > 0 && HasRoomFor(_retries.Peek().Operation))
        || (!HoldPending && (_regular.CanPlace || _blocking.CanPlace))
        || !_cancels.IsEmpty
        || (_carriedCancel is not null && HasRoomForCancel);

    private void Reap()
    {
        while (_ring.TryTakeCompletion(out ulong userData, out int result))
        {
            _inFlight--;
            if (userData == WakeTag)
            {
                _wakeArmed = false;
                continue;
            }
            if (userData == CancelTag)
            {
                continue;
            }
            IoUringOperation? operation = _engine.Lookup((int)(uint)userData);
            if (operation is null || operation.State != IoUringOperation.OperationState.InKernel || operation.UserData != userData)
            {
                continue;
            }
            LaneOf(operation).InFlight--;
            operation.State = IoUringOperation.OperationState.Queued;
            if (operation.OnCompletion(result))
            {
                _retries.Enqueue((operation, operation.Generation));
            }
        }
    }

    private void Fill()
    {
        if (!_wakeArmed && TryArmWake())
        {
            _wakeArmed = true;
        }
        // Cancellations first: a queued operation completes as cancelled at once, whatever the room.
        while (TakeCancel(out var cancel))
        {
            IoUringOperation target = cancel.Operation;
            if (target.Generation != cancel.Generation || !target.CancelRequested)
            {
                continue; // completed (and perhaps reused) already, or a write past its first byte that must finish
            }
            if (target.State == IoUringOperation.OperationState.Queued)
            {
                // Not in the kernel: no buffer to wait for. Its stale queue entry is skipped later.
                target.Cancel();
                continue;
            }
            // Only an operation the kernel holds needs ASYNC_CANCEL.
            if (target.State == IoUringOperation.OperationState.InKernel)
            {
                if (!HasRoomForCancel)
                {
                    _carriedCancel = cancel;
                    break;
                }
                IoUringSqe* sqe = _ring.TryGetSqe();
                if (sqe == null)
                {
                    _carriedCancel = cancel;
                    return;
                }
                sqe->Opcode = IORING_OP_ASYNC_CANCEL;
                sqe->Fd = -1;
                sqe->Address = target.UserData;
                sqe->UserData = CancelTag;
                _inFlight++;
            }
        }
        while (_retries.Count > 0)
        {
            var (operation, generation) = _retries.Peek();
            if (!IsQueued(operation, generation))
            {
                _retries.Dequeue();
                continue;
            }
            if (operation.CancelRequested)
            {
                _retries.Dequeue();
                operation.Cancel();
                continue;
            }
            if (!HasRoomFor(operation) || !TryPlace(operation))
            {
                break;
            }
            _retries.Dequeue();
        }
        if (!HoldPending && Place(_regular))
        {
            Place(_blocking);
        }
    }

    /// <summary>Places a lane's operations while it has room; false when the SQ ring is full.</summary>
    private bool Place(PendingLane lane)
    {
        while (lane.HasRoom && lane.TryTake(out IoUringOperation operation))
        {
            if (operation.CancelRequested)
            {
                operation.Cancel();
                continue;
            }
            if (!TryPlace(operation))
            {
                lane.CarryOver(operation);
                return false;
            }
        }
        return true;
    }

    // A queue entry is live while the operation is still that generation and not yet completed.
    private static bool IsQueued(IoUringOperation operation, uint generation)
        => operation.Generation == generation && operation.State == IoUringOperation.OperationState.Queued;

    private bool TakeCancel(out (IoUringOperation Operation, uint Generation) cancel)
    {
        if (_carriedCancel is { } carried)
        {
            _carriedCancel = null;
            cancel = carried;
            return true;
        }
        return _cancels.TryDequeue(out cancel);
    }

    private bool TryPlace(IoUringOperation operation)
    {
        if (SyscallFaults.Enabled)
        {
            int injected = operation.DecideFault();
            if (injected != 0)
            {
                // The test seam answers for the kernel, as a CQE with -errno would.
                if (operation.OnCompletion(-injected))
                {
                    _retries.Enqueue((operation, operation.Generation));
                }
                return true;
            }
        }
        IoUringSqe* sqe = _ring.TryGetSqe();
        if (sqe == null)
        {
            return false;
        }
        operation.FillSqe(sqe);
        operation.State = IoUringOperation.OperationState.InKernel;
        if (++_inFlight > _maxInFlight)
        {
            _maxInFlight = _inFlight;
        }
        LaneOf(operation).InFlight++;
        return true;
    }

    private bool TryArmWake()
    {
        if (!HasRoomForCancel)
        {
            return false;
        }
        IoUringSqe* sqe = _ring.TryGetSqe();
        if (sqe == null)
        {
            return false;
        }
        sqe->Opcode = IORING_OP_READ;
        sqe->Fd = _wakeFd;
        sqe->Address = (ulong)_wakeBuffer;
        sqe->Length = sizeof(ulong);
        sqe->UserData = WakeTag;
        _inFlight++;
        return true;
    }
}
