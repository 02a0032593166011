using System.Collections.Concurrent;
using Spindle.Diagnostics;
using Spindle.Interop;
using static Spindle.Interop.IoUringConstants;

namespace Spindle.Engines.IoUring;

/// <summary>
/// The ring's driver: turns queued operations into SQEs, submits, reaps CQEs into their operations, and cancels. At
/// most as many SQEs are in flight as the CQ ring has entries, so it cannot overflow. Operations that may wait for ever
/// (pipes, sockets, character devices) have a lane and budget of their own (<see cref="PendingLane"/>), so the others
/// never wait behind them; a reserve belongs to neither, so a cancellation always finds room. The gate's holder
/// (<see cref="RingThread"/>) calls it; <see cref="Queue"/>, <see cref="EnqueueCancel"/>, <see cref="Wait"/> and the counts are for any thread.
/// </summary>
internal sealed unsafe class RingDriver
{
    private const ulong CancelTag = ulong.MaxValue - 1; // user data of ASYNC_CANCEL requests (their CQEs carry nothing we need)

    private readonly IoUringEngine _engine;
    private readonly Ring _ring;
    private readonly PendingLane _regular = new();   // regular files and block devices: always finish
    private readonly PendingLane _blocking = new();  // pipes, sockets, character devices: may wait for ever
    private readonly PendingLane _workers = new();   // opens, closes, syncs: placed by the ring's thread only, whose io-wq limit was raised
    private readonly ConcurrentQueue<(RingOperation Operation, uint Generation)> _cancels = new(); // cancellation requests
    // Need another SQE; entries carry the generation as in PendingLane.
    private readonly Queue<(RingOperation Operation, uint Generation)> _retries = new();
    // Need another SQE from the ring's own thread (RingOperation.ReissueFromRingThread).
    private readonly Queue<(RingOperation Operation, uint Generation)> _ringThreadRetries = new();
    private int _ringThreadRetryCount;   // its length, for any thread
    private (RingOperation Operation, uint Generation)? _carriedCancel;
    private int _inFlight;               // SQEs submitted whose CQEs have not been reaped (≤ CQ entries)

    internal RingDriver(IoUringEngine engine, Ring ring)
    {
        _engine = engine;
        _ring = ring;
        // Half the room for each class, less the reserve, which belongs to neither.
        _blocking.Budget = (int)ring.CqEntries / 2;
        _workers.Budget = EngineTunables.WorkerBudget;
        _regular.Budget = (int)ring.CqEntries - EngineTunables.CancelReserve - _blocking.Budget - _workers.Budget;
    }

    // While a test's probe says so, callers' operations stay in their lane, as when the ring has no room.
    private bool HoldPending => EngineProbe.Current?.HoldsPending(_engine.Thread) == true;

    /// <summary>The setup flags the kernel accepted (for diagnostics).</summary>
    internal uint SetupFlags => _ring.SetupFlags;

    /// <summary>How many completions the CQ ring holds.</summary>
    internal uint CqEntries => _ring.CqEntries;

    /// <summary>How many operations that may wait for ever can be in the kernel at once.</summary>
    internal int BlockingBudget => _blocking.Budget;

    /// <summary>Whether a request waits for the ring's thread to place it: one for io-wq workers, or a reissue (any thread).</summary>
    internal bool WaitsForRingThread => (!HoldPending && _workers.CanPlace) || Volatile.Read(ref _ringThreadRetryCount) > 0;

    /// <summary>Whether the gate's holder now is the ring's own thread (set by it under the gate).</summary>
    internal bool OnRingThread;

    /// <summary>Whether something queued could be placed now (under the gate; the ring's thread must not sleep while so).</summary>
    internal bool CanPlaceMore()
        => (_retries.Count > 0 && HasRoomFor(_retries.Peek().Operation))
        || (OnRingThread && _ringThreadRetries.Count > 0 && HasRoomFor(_ringThreadRetries.Peek().Operation))
        || (!HoldPending && (_regular.CanPlace || _blocking.CanPlace || (OnRingThread && _workers.CanPlace)))
        || !_cancels.IsEmpty
        || (_carriedCancel is not null && HasRoomForCancel);

    /// <summary>SQEs placed but not submitted yet.</summary>
    internal uint Unsubmitted => _ring.Unsubmitted;

    /// <summary>Regular-file and block-device operations in the kernel now (any thread): each will complete, and wake the ring thread.</summary>
    internal int RegularInFlight => _regular.InFlight;

    /// <summary>Whether any request of a lane is in the kernel or waits to go in (any thread; a snapshot).</summary>
    internal bool HasRequests
        => _regular.InFlight + _blocking.InFlight + _workers.InFlight > 0
        || _regular.Queued + _blocking.Queued + _workers.Queued > 0
        || Volatile.Read(ref _ringThreadRetryCount) > 0;

    /// <summary>Queues a prepared operation in its lane (any thread).</summary>
    internal void Queue(RingOperation operation) => LaneOf(operation).Enqueue(operation);

    /// <summary>Queues a cancellation (any thread).</summary>
    internal void EnqueueCancel(RingOperation operation, uint generation) => _cancels.Enqueue((operation, generation));

    /// <summary>Submits what was placed, without waiting (under the gate).</summary>
    internal void Submit()
    {
        uint unsubmitted = _ring.Unsubmitted;
        int result = _ring.Enter(1, wait: false);
        if (unsubmitted > 0)
        {
            SpindleMetrics.Submission();
            EngineProbe.Current?.SubmittingEnter(_engine.Thread);
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

    /// <summary>Blocks until a completion arrives, submitting nothing (outside the gate: the kernel lets any thread wait).</summary>
    internal void Wait() => SubmitAndWait(0, -1);

    /// <summary>Publishes the SQEs placed so far without entering the kernel (under the gate); returns how many wait to be submitted.</summary>
    internal uint Publish() => _ring.Publish();

    /// <summary>Submits <paramref name="toSubmit"/> published SQEs and waits for a completion in one <c>io_uring_enter</c> (outside the gate); false when the time ran out.</summary>
    internal bool SubmitAndWait(uint toSubmit, long timeoutNanoseconds)
    {
        SpindleMetrics.Submission();
        if (toSubmit > 0)
        {
            EngineProbe.Current?.SubmittingEnter(_engine.Thread);
        }
        return _ring.SubmitAndWait(toSubmit, 1, timeoutNanoseconds) != -Errno.ETIME;
    }

    /// <summary>Whether <see cref="SubmitAndWait"/> can end after a time.</summary>
    internal bool CanWaitWithTimeout => _ring.CanWaitWithTimeout;

    /// <summary>Whether a completion waits in the CQ ring (any thread).</summary>
    internal bool HasCompletion => _ring.HasCompletion;

    /// <summary>Regular-file and block-device operations queued and not yet placed (any thread).</summary>
    internal int Queued => _regular.Queued;

    /// <summary>Hands every CQE to its operation; returns how many completed, and whether the CQE tagged <paramref name="ownTag"/> was among them.</summary>
    internal int Reap(ulong ownTag, out bool own)
    {
        own = false;
        int completed = 0;
        while (_ring.TryTakeCompletion(out ulong userData, out int result))
        {
            _inFlight--;
            if (userData == ownTag)
            {
                own = true;
                continue;
            }
            if (userData == CancelTag)
            {
                continue;
            }
            RingOperation? operation = _engine.Operations.Lookup((int)(uint)userData);
            if (operation is null || operation.State != RingOperation.OperationState.InKernel || !operation.Owns(userData))
            {
                continue;
            }
            LaneOf(operation).InFlight--;
            if (operation.AwaitsAnotherCompletion(userData, result))
            {
                continue; // the first CQE of a write linked to its sync: the operation waits for the second
            }
            // Still InKernel while its result is handled, so that its waiter cannot take it meanwhile.
            if (operation.OnCompletion(result))
            {
                Retry(operation);
            }
            else
            {
                completed++;
            }
        }
        return completed;
    }

    /// <summary>Places the caller's own read (the thread's wake-up) in the reserve; false when there is no room now.</summary>
    internal bool TryPlaceRead(int fd, void* buffer, uint length, ulong tag)
    {
        IoUringSqe* sqe = TryGetReserveSqe();
        if (sqe == null)
        {
            return false;
        }
        sqe->Opcode = IORING_OP_READ;
        sqe->Fd = fd;
        sqe->Address = (ulong)buffer;
        sqe->Length = length;
        sqe->UserData = tag;
        _inFlight++;
        return true;
    }

    /// <summary>Places cancellations, retries and the lanes' operations while there is room.</summary>
    internal void Fill()
    {
        // Cancellations first: a queued operation completes as cancelled at once, whatever the room.
        while (TakeCancel(out var cancel))
        {
            RingOperation target = cancel.Operation;
            if (target.Generation != cancel.Generation || !target.CancelRequested)
            {
                continue; // completed (and perhaps reused) already, or a write past its first byte that must finish
            }
            if (target.State == RingOperation.OperationState.Queued)
            {
                // Not in the kernel: no buffer to wait for (its stale entry is skipped later; a waiter that took it sees the cancellation).
                CancelQueued(target, cancel.Generation);
                continue;
            }
            // Only an operation the kernel holds needs ASYNC_CANCEL.
            if (target.State == RingOperation.OperationState.InKernel)
            {
                IoUringSqe* sqe = TryGetReserveSqe();
                if (sqe == null)
                {
                    _carriedCancel = cancel; // no room now: the next fill places it first
                    break;
                }
                sqe->Opcode = IORING_OP_ASYNC_CANCEL;
                sqe->Fd = -1;
                sqe->Address = target.UserDataOf(cancel.Generation);
                sqe->UserData = CancelTag;
                _inFlight++;
            }
        }
        PlaceRetries(_retries);
        if (OnRingThread && _ringThreadRetries.Count > 0)
        {
            PlaceRetries(_ringThreadRetries);
            Volatile.Write(ref _ringThreadRetryCount, _ringThreadRetries.Count);
        }
        if (!HoldPending && Place(_regular) && Place(_blocking) && OnRingThread)
        {
            Place(_workers);
        }
    }

    // Places operations that need another SQE, in order, while there is room.
    private void PlaceRetries(Queue<(RingOperation Operation, uint Generation)> retries)
    {
        while (retries.Count > 0)
        {
            var (operation, generation) = retries.Peek();
            if (!operation.IsQueued(generation))
            {
                retries.Dequeue();
                continue;
            }
            if (operation.CancelRequested)
            {
                retries.Dequeue();
                CancelQueued(operation, generation);
                continue;
            }
            if (!HasRoomFor(operation) || !TryPlace(operation, generation))
            {
                break;
            }
            retries.Dequeue();
        }
    }

    private PendingLane LaneOf(RingOperation operation) => operation.MayBlock ? _blocking : operation.WaitsInWorker ? _workers : _regular;

    // The lanes' budgets add up to the CQ ring less the reserve, so operations never take the reserve.
    private bool HasRoomFor(RingOperation operation) => LaneOf(operation).HasRoom;

    private bool HasRoomForCancel => _inFlight < _ring.CqEntries;

    // An SQE in the reserve (a cancellation, the thread's wake-up read), or null when there is no room now.
    private IoUringSqe* TryGetReserveSqe() => HasRoomForCancel ? _ring.TryGetSqe() : null;

    /// <summary>Places a lane's operations while it has room; false when the SQ ring is full.</summary>
    private bool Place(PendingLane lane)
    {
        while (lane.HasRoom && lane.TryTake(out var entry))
        {
            var (operation, generation) = entry;
            if (operation.CancelRequested)
            {
                CancelQueued(operation, generation);
                continue;
            }
            if (!TryPlace(operation, generation))
            {
                lane.CarryOver(operation, generation);
                return false;
            }
        }
        return true;
    }

    private bool TakeCancel(out (RingOperation Operation, uint Generation) cancel)
    {
        if (_carriedCancel is { } carried)
        {
            _carriedCancel = null;
            cancel = carried;
            return true;
        }
        return _cancels.TryDequeue(out cancel);
    }

    // A queued operation cancelled before it went in completes now, unless its waiter took it to run (and sees the cancellation there).
    private static void CancelQueued(RingOperation operation, uint generation)
    {
        if (operation.TryClaim(RingOperation.OperationState.InKernel, generation))
        {
            operation.Cancel();
        }
    }

    private void Retry(RingOperation operation)
    {
        operation.Requeue();
        if (operation.ReissueFromRingThread)
        {
            _ringThreadRetries.Enqueue((operation, operation.Generation));
            Volatile.Write(ref _ringThreadRetryCount, _ringThreadRetries.Count);
            return;
        }
        _retries.Enqueue((operation, operation.Generation));
    }

    // Fills the operation's SQEs; false only when the SQ ring has no room. One its waiter took is done with here.
    private bool TryPlace(RingOperation operation, uint generation)
    {
        int sqes = operation.SqeCount; // 2 for a write linked to its sync
        if (_ring.FreeSqes < sqes)
        {
            return false;
        }
        if (!operation.TryClaim(RingOperation.OperationState.InKernel, generation))
        {
            return true; // its waiter took it (or it completed and is in use again: the entry is stale)
        }
        if (SyscallSeam.Enabled)
        {
            int injected = operation.DecideFault();
            if (injected != 0)
            {
                // The test seam answers for the kernel, as a CQE with -errno would.
                if (operation.OnCompletion(-injected))
                {
                    Retry(operation);
                }
                return true;
            }
        }
        IoUringSqe* sqe = _ring.TryGetSqe(); // not null: only the thread that drives the ring takes SQEs
        operation.FillSqe(sqe);
        if (SyscallSeam.Enabled)
        {
            operation.ApplyFault(sqe);
        }
        if (sqes > 1)
        {
            operation.FillLinkedSqe(_ring.TryGetSqe());
        }
        _inFlight += sqes;
        EngineProbe.Current?.SqesInFlight(_engine.Thread, _inFlight);
        LaneOf(operation).InFlight += sqes;
        return true;
    }
}
