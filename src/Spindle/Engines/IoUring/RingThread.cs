using System.Collections.Concurrent;
using Spindle.Diagnostics;
using Spindle.Interop;
using static Spindle.Interop.IoUringConstants;

namespace Spindle.Engines.IoUring;

/// <summary>
/// The one thread that owns the ring. It drains the queue of operations callers prepared into SQEs,
/// submits them all with one <c>io_uring_enter</c> that also waits for completions, and completes the
/// operations whose CQEs arrive. Callers never make a system call unless the thread sleeps, and then
/// one eventfd write wakes it (a standing read on the eventfd completes). At most as many SQEs are
/// in flight as the CQ ring has entries, so the CQ ring cannot overflow; further operations wait in
/// the queue. The thread is a background thread: process exit does not wait for it.
/// </summary>
internal sealed unsafe class RingThread
{
    private const uint Entries = 256;                   // SQ ring size; the kernel makes the CQ ring twice as large
    private const ulong WakeTag = ulong.MaxValue;       // user data of the standing eventfd read
    private const ulong CancelTag = ulong.MaxValue - 1; // user data of ASYNC_CANCEL requests (their CQEs carry nothing we need)

    private readonly ConcurrentQueue<IoUringOperation> _pending = new();                   // prepared by callers, not yet on the ring
    private readonly ConcurrentQueue<(IoUringOperation Operation, uint Generation)> _cancels = new(); // cancellation requests
    private readonly Queue<IoUringOperation> _retries = new();                             // need another SQE (ring thread only)
    // Taken from a queue but not yet placed because the SQ ring was full. (ConcurrentQueue.TryPeek
    // is avoided: it pins the queue's segment and makes every later enqueue allocate.)
    private IoUringOperation? _carried;
    private (IoUringOperation Operation, uint Generation)? _carriedCancel;
    private IoUringEngine _engine = null!;

    /// <summary>The setup flags the kernel accepted (for diagnostics).</summary>
    internal uint SetupFlags => _ring.SetupFlags;

    /// <summary>Runs the continuations of completed operations on the thread pool.</summary>
    internal CompletionDispatcher Dispatcher { get; } = new();

    private Ring _ring = null!;
    private int _wakeFd = -1;            // eventfd that callers write to wake the thread
    private ulong* _wakeBuffer;          // where the standing eventfd read puts the counter
    private bool _wakeArmed;             // whether the eventfd read is on the ring
    private int _sleeping;               // 1 while the thread is (about to be) blocked in io_uring_enter
    private int _inFlight;               // SQEs submitted whose CQEs have not been reaped (≤ CQ entries)

    /// <summary>Starts the thread and waits until it has set up the ring (or failed to).</summary>
    internal bool Start(IoUringEngine engine, out string? reason)
    {
        _engine = engine;
        reason = null;
        int errno = 0;
        bool ready = false;
        using var started = new ManualResetEventSlim();
        var thread = new Thread(() =>
        {
            Ring? ring = Ring.TryCreate(Entries, out errno);
            int wakeFd = ring is null ? -1 : Libc.EventFd(0, EFD_CLOEXEC);
            if (ring is not null && wakeFd < 0)
            {
                errno = Errno.Last;
            }
            ready = ring is not null && wakeFd >= 0;
            if (ready)
            {
                _ring = ring!;
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
        if (!ready)
        {
            reason = $"io_uring_setup failed: {Errno.Message(errno)} (errno {errno})";
            Diagnostics.SpindleEventSource.Log.IoUringRefused(reason, errno);
        }
        return ready;
    }

    /// <summary>Queues a prepared operation (any thread).</summary>
    internal void Submit(IoUringOperation operation)
    {
        _pending.Enqueue(operation);
        WakeIfSleeping();
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

    private void Run()
    {
        while (true)
        {
            try
            {
                Reap();
                Fill();
                bool wait = false;
                if (!_ring.HasCompletion && (_retries.Count == 0 || !HasRoom))
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

    private bool HasRoom => _inFlight < _ring.CqEntries - CancelReserve;

    private bool HasRoomForCancel => _inFlight < _ring.CqEntries;

    private bool CanPlaceMore()
        => (HasRoom && (_retries.Count > 0 || _carried is not null || !_pending.IsEmpty))
        || (HasRoomForCancel && (_carriedCancel is not null || !_cancels.IsEmpty));

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
            operation.State = IoUringOperation.OperationState.Queued;
            if (operation.OnCompletion(result))
            {
                _retries.Enqueue(operation);
            }
        }
    }

    private void Fill()
    {
        if (!_wakeArmed && TryArmWake())
        {
            _wakeArmed = true;
        }
        while (_retries.Count > 0 && HasRoom)
        {
            IoUringOperation operation = _retries.Peek();
            if (operation.CancelRequested)
            {
                _retries.Dequeue();
                operation.Cancel();
                continue;
            }
            if (!TryPlace(operation))
            {
                return;
            }
            _retries.Dequeue();
        }
        while (HasRoomForCancel && TakeCancel(out var cancel))
        {
            IoUringOperation target = cancel.Operation;
            // Only an operation the kernel holds needs ASYNC_CANCEL; queued ones see their flag.
            if (target.State == IoUringOperation.OperationState.InKernel && target.Generation == cancel.Generation)
            {
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
        while (HasRoom && TakePending(out IoUringOperation? operation))
        {
            if (operation.CancelRequested)
            {
                operation.Cancel();
                continue;
            }
            if (!TryPlace(operation))
            {
                _carried = operation;
                return;
            }
        }
    }

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

    private bool TakePending([System.Diagnostics.CodeAnalysis.NotNullWhen(true)] out IoUringOperation? operation)
    {
        if (_carried is not null)
        {
            operation = _carried;
            _carried = null;
            return true;
        }
        return _pending.TryDequeue(out operation);
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
                    _retries.Enqueue(operation);
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
        _inFlight++;
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
