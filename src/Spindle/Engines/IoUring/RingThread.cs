using System.Collections.Concurrent;
using Spindle.Diagnostics;
using Spindle.Interop;
using static Spindle.Interop.IoUringConstants;

namespace Spindle.Engines.IoUring;

/// <summary>
/// The one thread that owns the ring. It drains the queues of operations callers prepared into SQEs,
/// submits them all with one <c>io_uring_enter</c> that also waits for completions, and completes the
/// operations whose CQEs arrive by handing them to <see cref="Continuations"/>: their continuations run
/// on the thread pool, never here. So no user code and no metrics listener can delay the ring, and the
/// kernel's task work for what this thread submitted always runs (it never sleeps in user code).
/// Callers never make a system call unless the thread sleeps, and then one eventfd write wakes it (a
/// standing read on the eventfd completes). At most as many SQEs are in flight as the CQ ring has
/// entries, so the CQ ring cannot overflow; further operations wait in the queue. Operations that may
/// wait for ever (pipes, sockets, character devices) have a lane and a budget of their own
/// (<see cref="PendingLane"/>; half the CQ ring) and the others never wait behind them; a queued
/// operation whose token is cancelled completes at once. The thread is a background thread: process
/// exit does not wait for it.
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

    /// <summary>Where completed operations' continuations run (the thread pool; rescue threads when it is starved).</summary>
    internal ContinuationDispatcher Continuations { get; } = new("Spindle io_uring completions");

    private Ring _ring = null!;
    private int _wakeFd = -1;            // eventfd that callers write to wake the thread
    private ulong* _wakeBuffer;          // where the standing eventfd read puts the counter
    private bool _wakeArmed;             // whether the eventfd read is on the ring
    private int _sleeping;               // 1 while the thread is (about to be) blocked in io_uring_enter
    private int _inFlight;               // SQEs submitted whose CQEs have not been reaped (≤ CQ entries)
    private int _maxInFlight;            // the most SQEs ever in flight at once (for tests)
    private long _submittingEnters;      // io_uring_enter calls that submitted SQEs (for tests)

    /// <summary>The most SQEs ever in flight at once; never more than the CQ ring holds.</summary>
    internal int MaxInFlight => Volatile.Read(ref _maxInFlight);

    /// <summary>How many <c>io_uring_enter</c> calls submitted SQEs.</summary>
    internal long SubmittingEnters => Volatile.Read(ref _submittingEnters);

    /// <summary>Whether the thread has decided to sleep (or sleeps) in <c>io_uring_enter</c> until a completion or a wake-up (tests).</summary>
    internal bool IsSleeping => Volatile.Read(ref _sleeping) != 0;

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
        var thread = new Thread(() =>
        {
            // The eventfd first: when the ring then fails, closing it is all there is to undo.
            int wakeFd = Libc.EventFd(0, EFD_CLOEXEC);
            Ring? ring = null;
            if (wakeFd < 0)
            {
                error = Errno.Last;
            }
            else if ((ring = Ring.TryCreate(Entries, shared: false, out error)) is null)
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

    /// <summary>Starts a prepared operation (any thread): queues it and wakes the ring thread if it sleeps.</summary>
    internal void Submit(IoUringOperation operation)
    {
        LaneOf(operation).Enqueue(operation);
        WakeIfSleeping();
    }

    /// <summary>Queues a prepared operation without waking the thread: a batch queues all of its operations, then calls <see cref="Wake"/> once.</summary>
    internal void Queue(IoUringOperation operation) => LaneOf(operation).Enqueue(operation);

    /// <summary>Wakes the thread if it sleeps, after <see cref="Queue"/>: what was queued while it slept goes in with one <c>io_uring_enter</c>.</summary>
    internal void Wake() => WakeIfSleeping();

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

    /// <summary>Completes an operation (ring thread): its continuation runs on the thread pool.</summary>
    internal void Deliver(IoUringOperation operation) => Continuations.Post(operation);

    /// <summary>The ring thread's loop: place what waits, submit and wait in one enter, reap.</summary>
    private void Run()
    {
        while (true)
        {
            try
            {
                Reap();
                Fill();
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
        if (unsubmitted > 0)
        {
            Volatile.Write(ref _submittingEnters, _submittingEnters + 1);
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
            if (operation is null || operation.State != IoUringOperation.OperationState.InKernel || !operation.Owns(userData))
            {
                continue;
            }
            LaneOf(operation).InFlight--;
            if (operation.AwaitsAnotherCompletion(userData, result))
            {
                continue; // the first CQE of a write linked to its sync: the operation waits for the second
            }
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
        int sqes = operation.SqeCount; // 2 for a write linked to its sync
        if (sqes > 1 && _ring.FreeSqes < sqes)
        {
            return false;
        }
        IoUringSqe* sqe = _ring.TryGetSqe();
        if (sqe == null)
        {
            return false;
        }
        operation.FillSqe(sqe);
        if (SyscallFaults.Enabled)
        {
            operation.ApplyFault(sqe);
        }
        if (sqes > 1)
        {
            operation.FillLinkedSqe(_ring.TryGetSqe());
        }
        operation.State = IoUringOperation.OperationState.InKernel;
        _inFlight += sqes;
        if (_inFlight > _maxInFlight)
        {
            _maxInFlight = _inFlight;
        }
        LaneOf(operation).InFlight += sqes;
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
