using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Handles;
using Spindle.Interop;
using Spindle.Syscalls;

namespace Spindle.Engines.IoUring;

/// <summary>
/// What every ring request shares: its slot (<see cref="Id"/>) and <see cref="Generation"/>, the SQE's user data;
/// cancellation; and who completes its task. The caller prepares it (handle referenced, buffers pinned); then only the
/// thread driving the ring touches it, and it completes only after the kernel's last CQE for it, so its buffers and
/// descriptor outlive the kernel's use. Each kind is a subclass that fills its SQE and reads its CQE.
/// </summary>
internal abstract unsafe class RingOperation : TransferTaskSource, IThreadPoolWorkItem, IRingWaitable
{
    internal enum OperationState : byte
    {
        Idle,     // in the pool, or being prepared by a caller
        Queued,   // waiting for the ring thread (pending queue or retry queue)
        InKernel, // an SQE for it was submitted and its CQE has not arrived
        RunHere,  // taken off the ring before it reached the kernel: the thread waiting for it runs its system call
    }

    private static readonly Action<object?> s_cancel = static state => ((RingOperation)state!).RequestCancel();

    private protected readonly IoUringEngine _engine;
    private protected HandleLease _handle;                   // held while prepared: the kernel uses the descriptor until the CQE
    private protected int _fd;
    private protected long _offset;                          // negative: the handle has no position
    private protected long _transferred;                     // bytes done so far by the kernel for this operation
    private long _result;                                    // what the operation returns, set by the ring thread before delivery
    private Exception? _error;                               // or how it failed
    private bool _succeeded;                                 // recorded in the metrics where the continuation runs, not on the ring thread
    private bool _ranHere;                                   // its waiter ran the system call (RunHere), not the ring
    private CancellationToken _cancellationToken;
    private CancellationTokenRegistration _registration;
    private protected volatile bool _cancelRequested;        // the token was cancelled (CancelRequested says whether that stops the operation)
    private CompletionHandOff _handOff;                      // who completes the task once the kernel is done
    private protected bool _shortenNext;                     // the test seam asked for a short transfer on the next SQE

    private protected RingOperation(IoUringEngine engine, int id)
    {
        _engine = engine;
        Id = id;
    }

    /// <summary>This object's slot in the engine's table.</summary>
    internal int Id { get; }

    /// <summary>Bumped on every reuse, so that a late cancellation cannot hit the next operation.</summary>
    internal uint Generation => (uint)((ulong)Volatile.Read(ref _stamp) >> 32);

    // Generation << 32 | OperationState, in one word: Queued is left only by a compare-and-swap of both (TryClaim), so
    // that a thread holding a stale queue entry cannot take the object's next use.
    private long _stamp;

    /// <summary>Where the operation is. From <see cref="OperationState.Queued"/> exactly one thread takes it: the ring's driver, or its waiter in <c>GetResult</c>.</summary>
    internal OperationState State => (OperationState)(byte)Volatile.Read(ref _stamp);

    /// <summary>Takes the operation for <paramref name="owner"/>'s use while it is queued as <paramref name="generation"/>; false when another thread took it first, or that use is over.</summary>
    internal bool TryClaim(OperationState owner, uint generation)
    {
        long queued = Stamp(generation, OperationState.Queued);
        return Interlocked.CompareExchange(ref _stamp, Stamp(generation, owner), queued) == queued;
    }

    /// <summary>Whether a queue entry for <paramref name="generation"/> is live: the object is still that use, and waits to go in.</summary>
    internal bool IsQueued(uint generation) => Volatile.Read(ref _stamp) == Stamp(generation, OperationState.Queued);

    /// <summary>The ring handled a CQE and the operation needs another SQE (a short transfer, EINTR): it waits to go in again.</summary>
    internal void Requeue() => SetState(OperationState.Queued);

    private static long Stamp(uint generation, OperationState state) => (long)((ulong)generation << 32 | (byte)state);

    // Only the thread that owns the operation now writes its state.
    private void SetState(OperationState state) => Volatile.Write(ref _stamp, Stamp(Generation, state));

    /// <summary>The handle may wait for ever (pipe, socket, character device): the operation goes in that lane. Set before queueing.</summary>
    internal bool MayBlock { get; set; }

    ref CompletionHandOff IRingWaitable.HandOff => ref _handOff;

    internal ulong UserData => UserDataOf(Generation);

    /// <summary>The SQE user data of this object's use as <paramref name="generation"/>.</summary>
    internal ulong UserDataOf(uint generation) => ((ulong)generation << 32) | (uint)Id;

    /// <summary>Whether the operation should stop for its token (<see cref="GoesOnAfterCancel"/> says when it may not).</summary>
    internal bool CancelRequested => _cancelRequested && !GoesOnAfterCancel;

    /// <summary>Whether the operation goes on to its end although cancelled: a write the kernel has begun, an open closing what it opened late.</summary>
    private protected virtual bool GoesOnAfterCancel => false;

    /// <summary>Whether a thread waiting in <c>GetResult</c> may run the request's system call itself before it reached the kernel (one SQE, its own task).</summary>
    private protected virtual bool WaiterMayRun => false;

    /// <summary>Whether the next SQE must go in from the ring's own thread: the kernel could not issue it on the submitter's (<see cref="OnTransferError"/>).</summary>
    internal bool ReissueFromRingThread { get; private set; }

    /// <summary>Whether the kernel serves the request in an io-wq worker (opens, closes, syncs, durable writes): it goes in from the ring's thread.</summary>
    internal virtual bool WaitsInWorker => false;

    /// <summary>SQEs the next step takes: 2 for a write linked to its sync, else 1 (ring thread).</summary>
    internal virtual int SqeCount => 1;

    /// <summary>Whether a CQE with <paramref name="userData"/> belongs to this operation's SQEs in flight.</summary>
    internal virtual bool Owns(ulong userData) => userData == UserData;

    /// <summary>A CQE of this operation arrived (ring thread); true while another is due (the first of a linked pair).</summary>
    internal virtual bool AwaitsAnotherCompletion(ulong userData, int result) => false;

    /// <summary>Fills the SQE for the next step of the operation (ring thread).</summary>
    internal abstract void FillSqe(IoUringSqe* sqe);

    /// <summary>Fills the second SQE of a step that takes two (<see cref="SqeCount"/>).</summary>
    internal virtual void FillLinkedSqe(IoUringSqe* sqe)
    {
    }

    /// <summary>Handles the kernel's result for the SQE in flight; true when another SQE is needed (a short write, EINTR), else it has completed.</summary>
    internal bool OnCompletion(int result)
    {
        try
        {
            return OnResult(result);
        }
        catch (Exception e)
        {
            Fail(e);
            return false;
        }
    }

    /// <summary>What <see cref="OnCompletion"/> does for this kind of request.</summary>
    private protected abstract bool OnResult(int result);

    /// <summary>The test seam (<see cref="SyscallSeam"/>, armed only by tests): an errno to answer the next SQE with, or 0.</summary>
    internal virtual int DecideFault() => 0;

    /// <summary>The test seam's answer for the next transfer of <paramref name="kind"/>: an errno, or 0 (it may ask for a short one).</summary>
    private protected int DecideTransferFault(SyscallKind kind)
    {
        SyscallFault fault = SyscallSeam.Decide(_fd, kind);
        _shortenNext = fault == SyscallFault.ShortTransfer && SyscallSeam.Plausible(_offset);
        return SyscallSeam.ErrnoOf(fault);
    }

    /// <summary>The test seam: shortens the SQE <see cref="FillSqe"/> just filled when <see cref="DecideFault"/> asked for it.</summary>
    internal virtual void ApplyFault(IoUringSqe* sqe)
    {
        if (_shortenNext)
        {
            _shortenNext = false;
            sqe->Length = (uint)SyscallSeam.Shorten(sqe->Length);
        }
    }

    /// <summary>The direction the metrics record for this kind of request.</summary>
    private protected virtual IoDirection Direction => IoDirection.Write;

    /// <summary>Starts a use of the object: a new generation, the handle referenced (or a bare descriptor when <paramref name="handle"/> is null).</summary>
    private protected void Begin(SafeFileHandle? handle, int fd, long offset)
    {
        Volatile.Write(ref _stamp, Stamp(Generation + 1, OperationState.Idle));
        _offset = offset;
        _transferred = 0;
        _cancelRequested = false;
        _ranHere = false;
        ReissueFromRingThread = false;
        _handle = handle is null ? default : HandleLease.Acquire(handle);
        _fd = handle is null ? fd : HandleIo.Fd(handle);
    }

    /// <summary>Counts a file request in flight (until <see cref="Finish"/>) and hooks up cancellation; then the operation belongs to the ring.</summary>
    internal void Arm(CancellationToken cancellationToken)
    {
        if (!MayBlock)
        {
            FileRequestsInFlight.Enter();
        }
        SetState(OperationState.Queued);
        _handOff.Reset();
        _cancellationToken = cancellationToken;
        if (cancellationToken.CanBeCanceled)
        {
            _registration = cancellationToken.UnsafeRegister(s_cancel, this);
        }
    }

    private void RequestCancel()
    {
        _cancelRequested = true;
        _engine.Thread.RequestCancel(this, Generation);
    }

    private protected bool ContinueUnlessCancelled()
    {
        if (CancelRequested)
        {
            Cancel();
            return false;
        }
        return true;
    }

    private protected void Advance(int bytes)
    {
        if (_offset >= 0)
        {
            _offset += bytes;
        }
    }

    /// <summary>A read's or a write's CQE with an error: true when the operation goes on with another SQE.</summary>
    private protected bool OnTransferError(int errno)
    {
        // EAGAIN is not retried: it comes only for O_NONBLOCK descriptors, where the synchronous path reports it too.
        if (errno == Errno.EINTR || errno == Errno.ECANCELED && !CancelRequested)
        {
            return ContinueUnlessCancelled();
        }
        if (errno == Errno.ECANCELED)
        {
            Cancel(); // the kernel wrote nothing of it, or the write had not begun
            return false;
        }
        if (errno == Errno.EFAULT && !ReissueFromRingThread)
        {
            // io_uring reissues some requests on the submitting thread and fails them with EFAULT once it has exited:
            // again from the ring's thread, which never exits (an EFAULT from there is the buffer's own).
            ReissueFromRingThread = true;
            return ContinueUnlessCancelled();
        }
        if (_offset >= 0 && errno is Errno.ESPIPE or Errno.ENXIO)
        {
            // A handle that claimed positions but has none: go on without, like the synchronous path.
            _offset = -1;
            return ContinueUnlessCancelled();
        }
        Fail(IoErrors.ForErrno(errno, HandlePath));
        return false;
    }

    /// <summary>The CQE of an <c>fsync</c> or <c>fdatasync</c>: true when it must be submitted again.</summary>
    private protected bool OnSyncResult(int result)
    {
        if (result >= 0 || IsUnsyncable(-result))
        {
            Succeed(_transferred);
            return false;
        }
        int errno = -result;
        if (errno == Errno.EINTR || errno == Errno.ECANCELED && !CancelRequested)
        {
            return true;
        }
        if (errno == Errno.ECANCELED)
        {
            Cancel();
            return false;
        }
        Fail(IoErrors.ForErrno(errno, HandlePath));
        return false;
    }

    // Special files that cannot be synchronised are not an error, as for fsync in System.IO.
    private protected static bool IsUnsyncable(int errno) => errno is Errno.EROFS or Errno.EINVAL or Errno.EOPNOTSUPP;

    /// <summary>The path of the operation's handle, for an exception's message.</summary>
    private protected string? HandlePath => _handle.Handle is { } handle ? SafeFileHandleInternals.GetPath(handle) : null;

    /// <summary>Completes as cancelled (the kernel no longer uses the buffers).</summary>
    internal void Cancel() => Finish(0, new OperationCanceledException(_cancellationToken));

    internal void Fail(Exception error) => Finish(0, error);

    private protected void Succeed(long result)
    {
        _succeeded = true;
        Finish(result, null);
    }

    /// <summary>Lets go of the handle and buffers, then hands the result on (never touch the object afterwards).</summary>
    private protected void Finish(long result, Exception? error)
    {
        // Waits for a cancellation callback running right now, so none can run after reuse.
        _registration.Dispose();
        _registration = default;
        _cancellationToken = default;
        ReleaseResources();
        SetState(OperationState.Idle);
        _result = result;
        _error = error;
        if (!MayBlock)
        {
            FileRequestsInFlight.Leave();
        }
        Deliver();
    }

    /// <summary>Hands the finished operation on: to its waiter, the inline queue or the thread pool (a batch's read reports to its batch).</summary>
    private protected virtual void Deliver() => _engine.Thread.Deliver(this);

    /// <summary>The finished operation's outcome, taken once (a batch's read copies it out before the object goes back to its pool).</summary>
    private protected (long Result, Exception? Error) TakeOutcome()
    {
        Exception? error = _error;
        _error = null;
        _succeeded = false;
        return (_result, error);
    }

    // A pool thread will run the continuation: it should also be the thread that reaps the completion (RingThread.Awaited).
    private protected override void OnAwaited()
    {
        if (!Inline && !MayBlock)
        {
            _engine.Thread.Awaited();
        }
    }

    void IThreadPoolWorkItem.Execute() => RunQueued(Generation);

    /// <summary>Reaper, under the gate: completes the task for a thread waiting in <c>GetResult</c> (no user code runs then); else marks it queued and returns false.</summary>
    internal bool TryHandToWaiter()
    {
        if (!_handOff.TryHandToWaiter(out bool polls))
        {
            return false;
        }
        CompleteTask(); // wakes the waiter, if it sleeps
        if (polls)
        {
            _engine.Thread.KickPoller(); // it waits in the kernel for this completion, which this thread took
        }
        return true;
    }

    /// <summary>Runs a queued completion (a pool thread, or the reaper inline): metrics, then the task; nothing for a stale entry.</summary>
    internal void RunQueued(uint generation)
    {
        if (Generation != generation || !_handOff.TryTakeQueued())
        {
            return;
        }
        RecordMetrics();
        CompleteTask();
    }

    private void RecordMetrics()
    {
        if (_succeeded)
        {
            _succeeded = false;
            SpindleMetrics.Operation(IoEngine.IoUring, Direction, _transferred, _ranHere ? IoMechanism.Inline : IoMechanism.Ring);
        }
    }

    /// <summary>
    /// <c>GetResult</c> before completion: a request not yet in the kernel runs here as a system call (as System.IO's
    /// waiter runs a work item the pool has not started); else the caller polls the ring unless another thread does.
    /// </summary>
    private protected override void WaitForCompletion(short token)
    {
        switch (_handOff.BeginWait())
        {
            case CompletionHandOff.Wait.Pending:
                if (WaiterMayRun && TryClaim(OperationState.RunHere, Generation))
                {
                    RunHere();
                }
                else
                {
                    _engine.Thread.WaitFor(this, token, mayPoll: !MayBlock); // one that may wait for ever leaves the ring to others
                }
                RecordMetrics();
                return;
            case CompletionHandOff.Wait.TakeQueued:
                // Completed and queued for a pool thread that has not taken it: take it here (its entry is skipped).
                RecordMetrics();
                CompleteTask();
                return;
            default:
                CompletionHandOff.SpinUntilCompleted(this, token);
                return;
        }
    }

    // The waiter runs the request: each step's system call answers through OnCompletion as its CQE would.
    private void RunHere()
    {
        _ranHere = true;
        if (!ContinueUnlessCancelled())
        {
            return; // cancelled while it waited to go in: the cancellation wins, as it does on the ring
        }
        int result;
        do
        {
            result = RunStepHere();
        }
        while (OnCompletion(result));
    }

    private int RunStepHere()
    {
        if (SyscallSeam.Enabled)
        {
            int injected = DecideFault();
            if (injected != 0)
            {
                return -injected; // the test seam answers for the kernel, as on the ring
            }
        }
        IoUringSqe sqe = default;
        FillSqe(&sqe);
        if (SyscallSeam.Enabled)
        {
            ApplyFault(&sqe);
        }
        return SqeSystemCall.Run(&sqe);
    }

    private void CompleteTask()
    {
        Exception? error = _error;
        _error = null;
        Complete(_result, error);
    }

    /// <summary>Unpins the buffers and drops the handle reference (also used when preparation failed).</summary>
    internal virtual void ReleaseResources() => _handle.Release();

    /// <summary>Frees the native memory of an operation the engine retires (never one in use).</summary>
    internal virtual void FreeNativeMemory()
    {
    }

    /// <summary>Gives the object back to its kind's pool; false when the pool is full (the engine then retires it).</summary>
    internal abstract bool ReturnToPool();

    private protected override void Recycle() => _engine.Operations.Return(this);
}

/// <summary>A kind of ring request the engine can make in a slot of its table (each subclass of <see cref="RingOperation"/>).</summary>
internal interface IRingOperationKind<T>
    where T : RingOperation
{
    /// <summary>A new operation of this kind in slot <paramref name="id"/>.</summary>
    static abstract T Create(IoUringEngine engine, int id);
}

/// <summary>A kind of ring request that serves a <see cref="FileRequest"/> (a transfer, a sync, a durable write).</summary>
internal interface IRingFileRequest
{
    /// <summary>Takes what <paramref name="request"/> asks for: the handle referenced, the buffers pinned (released if this throws).</summary>
    void Prepare(in FileRequest request);
}
