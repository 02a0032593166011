using System.Buffers;
using System.Runtime.InteropServices;
using System.Threading.Tasks.Sources;
using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Handles;
using Spindle.Interop;
using Spindle.Syscalls;
using static Spindle.Interop.IoUringConstants;

namespace Spindle.Engines.IoUring;

/// <summary>
/// One file operation on the ring, and the <see cref="ValueTask"/> source its caller awaits. Pooled
/// and reused; its <see cref="UserData"/> (slot id and generation) travels through the kernel instead
/// of a GC handle. The caller prepares it (handle referenced, buffers pinned); from then on only the
/// ring thread touches it until it completes, which happens only after the kernel's last completion
/// for it, so the buffers and the descriptor outlive every use the kernel makes of them.
/// </summary>
internal sealed unsafe partial class IoUringOperation : TransferTaskSource, IThreadPoolWorkItem
{
    internal enum OperationState : byte
    {
        Idle,     // in the pool, or being prepared by a caller
        Queued,   // waiting for the ring thread (pending queue or retry queue)
        InKernel, // an SQE for it was submitted and its CQE has not arrived
    }

    private enum OperationKind : byte
    {
        Read,
        Write,
        ReadVectors,
        WriteVectors,
        Fsync,
        Open,         // IoUringOperation.Open.cs
        Close,        // IoUringOperation.Open.cs
        DataSync,     // IoUringOperation.Durable.cs (the durable kinds stay last: OnCompletion tests >= DataSync)
        WriteDurable, // IoUringOperation.Durable.cs
    }

    private static readonly Action<object?> s_cancel = static state => ((IoUringOperation)state!).RequestCancel();

    // Who completes the task, once the kernel is done (_delivery).
    private const int InFlight = 0;    // nobody waits synchronously: the reaper queues it (thread pool or inline)
    private const int Waited = 1;      // a thread waits in GetResult: the reaper completes it and wakes that thread
    private const int Queued = 2;      // completed and queued: whoever takes the entry first completes the task
    private const int Taken = 3;       // the task is completed (or being completed) by whoever took it

    private readonly IoUringEngine _engine;
    private long _result;                                    // what the operation returns, set by the ring thread before delivery
    private Exception? _error;                               // or how it failed
    private bool _succeeded;                                 // recorded in the metrics where the continuation runs, not on the ring thread
    private OperationKind _kind;
    private HandleLease _handle;                             // held while prepared: the kernel uses the descriptor until the CQE
    private int _fd;
    private MemoryHandle _pin;                               // the single buffer of Read/Write
    private PinnedIovecs _vectorPins;                        // the buffers of ReadVectors/WriteVectors, pinned in _vectors until the CQE
    private IoVector* _vectors;                              // native iovecs, reused across operations
    private int _vectorCapacity;
    private int _vectorCount;
    private int _vectorIndex;                                // first iovec not yet done
    private int _chunkCount;                                 // iovecs in the SQE in flight
    private byte* _address;                                  // Read/Write: where the next byte goes or comes from
    private uint _remaining;                                 // Read/Write: bytes still to transfer in this SQE
    private long _offset;                                    // negative: the handle has no position
    private long _transferred;                               // bytes done so far by the kernel for this operation
    private long _prefix;                                    // bytes the fast path read before the operation started
    private CancellationToken _cancellationToken;
    private CancellationTokenRegistration _registration;
    private volatile bool _cancelRequested;
    private int _delivery;                                   // InFlight, Waited, Queued or Taken

    // Continuations run on the thread that takes the completion: a pool thread (CompletionQueue), or the reaper in the inline mode.
    internal IoUringOperation(IoUringEngine engine, int id)
    {
        _engine = engine;
        Id = id;
    }

    /// <summary>This object's slot in the engine's table.</summary>
    internal int Id { get; }

    /// <summary>Bumped on every reuse, so that a late cancellation cannot hit the next operation.</summary>
    internal uint Generation { get; private set; }

    /// <summary>Where the operation is; written by the caller before queueing, then by the ring thread only.</summary>
    internal OperationState State { get; set; }

    /// <summary>
    /// Whether the operation should stop for its token. A write that has already handed bytes to the kernel
    /// goes on to the end, as System.IO's blocking write does: reporting a cancellation then would hide bytes a
    /// reader already has, and a caller that retries would send them twice.
    /// </summary>
    internal bool CancelRequested => _cancelRequested && !HasWrittenBytes && !_closingLateDescriptor;

    private bool HasWrittenBytes => _kind is OperationKind.Write or OperationKind.WriteVectors or OperationKind.WriteDurable && _transferred > 0;

    /// <summary>
    /// The handle may wait for ever (pipe, socket, character device): the operation goes in the ring's
    /// lane for such operations. Set by the engine before queueing.
    /// </summary>
    internal bool MayBlock { get; set; }

    /// <summary>Whether the kernel serves the request in an io-wq worker (opens, closes, syncs, durable writes): it goes in from the ring's thread.</summary>
    internal bool WaitsInWorker => _kind is OperationKind.Open or OperationKind.Close or OperationKind.Fsync or OperationKind.DataSync or OperationKind.WriteDurable;

    /// <summary>Whether the continuation runs on the thread that reaps the completion (the inline mode) instead of a pool thread.</summary>
    internal bool Inline { get; set; }

    internal ulong UserData => ((ulong)Generation << 32) | (uint)Id;

    internal void PrepareRead(SafeFileHandle handle, Memory<byte> buffer, long offset, long prefix)
    {
        Begin(OperationKind.Read, handle, offset);
        _prefix = prefix;
        _pin = buffer.Pin();
        _address = (byte*)_pin.Pointer;
        _remaining = (uint)Math.Min(buffer.Length, LinuxConstants.MaxReadWriteCount);
    }

    internal void PrepareWrite(SafeFileHandle handle, ReadOnlyMemory<byte> buffer, long offset)
    {
        Begin(OperationKind.Write, handle, offset);
        _pin = buffer.Pin();
        _address = (byte*)_pin.Pointer;
        _remaining = (uint)buffer.Length;
    }

    internal void PrepareReadVectors(SafeFileHandle handle, IReadOnlyList<Memory<byte>> buffers, long offset)
    {
        Begin(OperationKind.ReadVectors, handle, offset);
        int count = buffers.Count;
        EnsureVectors(count);
        _vectorPins = PinnedIovecs.Pin(new ScatterBuffers(buffers), count, _vectors, _vectorCapacity);
        _vectorCount = count;
    }

    internal void PrepareWriteVectors(SafeFileHandle handle, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long offset)
    {
        Begin(OperationKind.WriteVectors, handle, offset);
        int count = buffers.Count;
        EnsureVectors(count);
        _vectorPins = PinnedIovecs.Pin(new GatherBuffers(buffers), count, _vectors, _vectorCapacity);
        _vectorCount = count;
        SkipEmptyVectors(); // the router sent no all-empty write here; leading empty buffers are skipped
    }

    internal void PrepareFsync(SafeFileHandle handle) => Begin(OperationKind.Fsync, handle, -1);

    private void Begin(OperationKind kind, SafeFileHandle handle, long offset)
    {
        Generation++;
        _kind = kind;
        _offset = offset;
        _transferred = 0;
        _prefix = 0;
        _vectorCount = 0;
        _vectorIndex = 0;
        _cancelRequested = false;
        _handle = HandleLease.Acquire(handle);
        _fd = HandleIo.Fd(handle);
    }

    /// <summary>
    /// Hooks up cancellation; then the operation belongs to the ring thread. A token that is already
    /// cancelled runs <see cref="RequestCancel"/> right here, which the ring thread then sees.
    /// </summary>
    internal void Arm(CancellationToken cancellationToken)
    {
        State = OperationState.Queued;
        _delivery = InFlight;
        _cancellationToken = cancellationToken;
        if (cancellationToken.CanBeCanceled)
        {
            _registration = cancellationToken.UnsafeRegister(s_cancel, this);
        }
    }

    private void RequestCancel()
    {
        _cancelRequested = true;
        _engine.RequestCancel(this, Generation);
    }

    /// <summary>Fills the SQE for the next step of the operation (ring thread).</summary>
    internal void FillSqe(IoUringSqe* sqe)
    {
        sqe->Fd = _fd;
        sqe->UserData = UserData;
        sqe->Offset = _offset >= 0 ? (ulong)_offset : ulong.MaxValue; // -1: the current position, for handles without positions
        switch (_kind)
        {
            case OperationKind.Read:
            case OperationKind.Write:
                sqe->Opcode = _kind == OperationKind.Read ? IORING_OP_READ : IORING_OP_WRITE;
                sqe->Address = (ulong)_address;
                sqe->Length = _remaining;
                break;
            case OperationKind.ReadVectors:
            case OperationKind.WriteVectors:
                sqe->Opcode = _kind == OperationKind.ReadVectors ? IORING_OP_READV : IORING_OP_WRITEV;
                _chunkCount = Math.Min(_vectorCount - _vectorIndex, LinuxConstants.IOV_MAX);
                sqe->Address = (ulong)(_vectors + _vectorIndex);
                sqe->Length = (uint)_chunkCount;
                break;
            case OperationKind.DataSync:
            case OperationKind.WriteDurable:
                FillDurableSqe(sqe);
                break;
            case OperationKind.Open:
            case OperationKind.Close:
                FillFileSqe(sqe);
                break;
            default:
                sqe->Opcode = IORING_OP_FSYNC;
                sqe->Offset = 0;
                break;
        }
    }

    /// <summary>
    /// Handles the kernel's result for the SQE in flight (ring thread). Returns true when the
    /// operation needs another SQE (a short write, EINTR); otherwise it has completed.
    /// </summary>
    internal bool OnCompletion(int result)
    {
        try
        {
            if (_kind is OperationKind.Open or OperationKind.Close)
            {
                return OnFileCompletion(result);
            }
            if (_kind >= OperationKind.DataSync)
            {
                return OnDurableCompletion(result);
            }
            if (result < 0)
            {
                return OnError(-result);
            }
            switch (_kind)
            {
                case OperationKind.Read:
                    _transferred += result;
                    Succeed();
                    return false;
                case OperationKind.Write:
                    _transferred += result;
                    _address += result;
                    _remaining -= (uint)result;
                    Advance(result);
                    if (_remaining == 0)
                    {
                        Succeed();
                        return false;
                    }
                    return ContinueUnlessCancelled();
                case OperationKind.ReadVectors:
                    // One READV over at most IOV_MAX buffers, like System.IO's single preadv: a scatter
                    // read may return fewer bytes than the buffers hold, and callers loop.
                    _transferred += result;
                    Succeed();
                    return false;
                case OperationKind.WriteVectors:
                    _transferred += result;
                    Advance(result);
                    IoVector* vectors = _vectors + _vectorIndex;
                    int count = _vectorCount - _vectorIndex;
                    PositionalIo.Advance(ref vectors, ref count, (nuint)result);
                    _vectorIndex = (int)(vectors - _vectors);
                    SkipEmptyVectors();
                    if (_vectorIndex == _vectorCount)
                    {
                        Succeed();
                        return false;
                    }
                    return ContinueUnlessCancelled();
                default:
                    Succeed();
                    return false;
            }
        }
        catch (Exception e)
        {
            Fail(e);
            return false;
        }
    }

    private bool OnError(int errno)
    {
        // EAGAIN is not retried: it only reaches us for O_NONBLOCK descriptors, where the synchronous
        // path reports it too (retrying would spin the ring thread until data arrives).
        if (errno == Errno.EINTR || errno == Errno.ECANCELED && !CancelRequested)
        {
            return ContinueUnlessCancelled();
        }
        if (errno == Errno.ECANCELED)
        {
            Cancel();
            return false;
        }
        if (_offset >= 0 && errno is Errno.ESPIPE or Errno.ENXIO && _kind != OperationKind.Fsync)
        {
            // A handle that claimed positions but has none: go on without, like the synchronous path.
            _offset = -1;
            return ContinueUnlessCancelled();
        }
        if (_kind == OperationKind.Fsync && errno is Errno.EROFS or Errno.EINVAL or Errno.EOPNOTSUPP)
        {
            // Special files that cannot be synchronised are not an error, as in System.IO.
            Succeed();
            return false;
        }
        Fail(IoErrors.ForErrno(errno, SafeFileHandleInternals.GetPath(_handle.Handle!)));
        return false;
    }

    private bool ContinueUnlessCancelled()
    {
        if (CancelRequested)
        {
            Cancel();
            return false;
        }
        return true;
    }

    private void Advance(int bytes)
    {
        if (_offset >= 0)
        {
            _offset += bytes;
        }
    }

    private void SkipEmptyVectors()
    {
        while (_vectorIndex < _vectorCount && _vectors[_vectorIndex].Count == 0)
        {
            _vectorIndex++;
        }
    }

    private void EnsureVectors(int count)
    {
        if (count > _vectorCapacity)
        {
            int capacity = Math.Max(count, Math.Max(4, _vectorCapacity * 2));
            _vectors = (IoVector*)NativeMemory.Realloc(_vectors, (nuint)capacity * (nuint)sizeof(IoVector));
            _vectorCapacity = capacity;
        }
    }

    /// <summary>Completes as cancelled (the kernel no longer uses the buffers).</summary>
    internal void Cancel() => Finish(0, new OperationCanceledException(_cancellationToken));

    internal void Fail(Exception error) => Finish(0, error);

    private void Succeed()
    {
        _succeeded = true;
        Finish(_prefix + _transferred, null);
    }

    /// <summary>Lets go of the handle and buffers, then hands the result to the dispatcher (never touch the object afterwards).</summary>
    private void Finish(long result, Exception? error)
    {
        // Waits for a cancellation callback running right now, so none can run after reuse.
        _registration.Dispose();
        _registration = default;
        _cancellationToken = default;
        ReleaseResources();
        State = OperationState.Idle;
        _result = result;
        _error = error;
        FileRequestsInFlight.LeaveRing(fileRequest: !MayBlock);
        if (_batch is not null)
        {
            CompleteInBatch(); // IoUringOperation.Batch.cs
            return;
        }
        _engine.Thread.Deliver(this);
    }

    void IThreadPoolWorkItem.Execute() => RunQueued(Generation);

    /// <summary>
    /// Reaper, under the ring's gate: when a thread waits for this operation in <c>GetResult</c> (no continuation is
    /// registered then, so no user code runs), completes the task and wakes it, and returns true; otherwise marks the
    /// operation queued for <see cref="RunQueued"/> and returns false.
    /// </summary>
    internal bool TryHandToWaiter()
    {
        if (Interlocked.CompareExchange(ref _delivery, Queued, InFlight) == InFlight)
        {
            return false;
        }
        _delivery = Taken;
        CompleteTask(); // wakes the waiter
        return true;
    }

    /// <summary>
    /// Runs a queued completion (a pool thread, or the reaper in the inline mode): records the operation in the metrics,
    /// whose listeners may run any code, then completes the task, running its continuation here. Does nothing for a
    /// stale entry (a waiter took the operation first; it may be in use again, as another <paramref name="generation"/>).
    /// </summary>
    internal void RunQueued(uint generation)
    {
        if (Generation != generation || Interlocked.CompareExchange(ref _delivery, Taken, Queued) != Queued)
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
            SpindleMetrics.Operation(IoEngine.IoUring, _kind is OperationKind.Read or OperationKind.ReadVectors ? IoDirection.Read : IoDirection.Write, _transferred, IoMechanism.Ring);
        }
    }

    /// <summary>
    /// <c>GetResult</c> before completion (sync-over-async): the caller drives the ring itself — submits, takes what
    /// is ready — and sleeps only when nothing is, until a reaper (another waiter, a pool thread, the ring's thread)
    /// completes the operation and wakes it. No pool thread is needed for it to finish.
    /// </summary>
    private protected override void WaitForCompletion(short token)
    {
        switch (Interlocked.CompareExchange(ref _delivery, Waited, InFlight))
        {
            case InFlight:
                _engine.Thread.CountWaiter(1);
                _engine.Thread.Flush();
                WaitUntilCompleted(token);
                _engine.Thread.CountWaiter(-1);
                RecordMetrics();
                return;
            case Queued when Interlocked.CompareExchange(ref _delivery, Taken, Queued) == Queued:
                // Completed and queued for a pool thread that has not taken it: take it here (its entry is skipped).
                RecordMetrics();
                CompleteTask();
                return;
            default:
                // Another thread is completing it right now.
                var spinner = default(SpinWait);
                while (IsPending(token))
                {
                    spinner.SpinOnce();
                }
                return;
        }
    }

    private void CompleteTask()
    {
        Exception? error = _error;
        _error = null;
        Complete(_result, error);
    }

    /// <summary>Unpins the buffers and drops the handle reference (also used when preparation failed).</summary>
    internal void ReleaseResources()
    {
        _pin.Dispose();
        _pin = default;
        _vectorPins.Dispose();
        _vectorCount = 0;
        _address = null;
        _handle.Release();
    }

    /// <summary>Frees the native iovec arrays of an operation the engine retires (never one in use).</summary>
    internal void FreeNativeMemory()
    {
        FreePath();
        NativeMemory.Free(_vectors);
        _vectors = null;
        _vectorCapacity = 0;
        NativeMemory.Free(_cutVectors);
        _cutVectors = null;
        _cutCapacity = 0;
    }

    private protected override void Recycle() => _engine.Return(this);
}
