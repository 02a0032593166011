using System.Buffers;
using System.Runtime.InteropServices;
using Spindle.Diagnostics;
using Spindle.Interop;
using Spindle.Syscalls;
using static Spindle.Interop.IoUringConstants;

namespace Spindle.Engines.IoUring;

/// <summary>
/// A read or write on the ring, of one buffer or several. A write goes on until every byte is written, as System.IO's
/// does; a read returns what one call returned. A batch's read (<see cref="IoUringBatch"/>) reports to its batch.
/// </summary>
internal sealed unsafe class RingTransfer(IoUringEngine engine, int id) : RingOperation(engine, id), IRingOperationKind<RingTransfer>, IRingFileRequest
{
    private bool _write;                                     // a write rather than a read
    private MemoryHandle _pin;                               // the single buffer
    private byte* _address;                                  // single buffer: where the next byte goes or comes from
    private uint _remaining;                                 // single buffer: bytes still to transfer in this SQE
    private PinnedIovecs _vectorPins;                        // several buffers, pinned in _vectors until the CQE
    private IoVector* _vectors;                              // native iovecs, reused across operations
    private int _vectorCapacity;
    private int _vectorCount;                                // 0 for a single buffer
    private int _vectorIndex;                                // first iovec not yet done
    private long _prefix;                                    // bytes the fast path read before the operation started
    private IoUringBatch? _batch;                            // the batch this read belongs to, or null
    private int _batchIndex;                                 // its request's index in the batch
    private IoVector* _cutVectors;                           // the test seam's shortened iovec list
    private int _cutCapacity;

    static RingTransfer IRingOperationKind<RingTransfer>.Create(IoUringEngine engine, int id) => new(engine, id);

    // A write that has handed bytes to the kernel goes on to the end, as System.IO's blocking write does.
    private protected override bool GoesOnAfterCancel => _write && _transferred > 0;

    private protected override IoDirection Direction => _write ? IoDirection.Write : IoDirection.Read;

    // A batch's read reports to its batch, whose waiter waits for all of them.
    private protected override bool WaiterMayRun => _batch is null && !MayBlock;

    /// <summary>A read or write of <paramref name="request"/>'s buffer or buffers; a read counts the bytes the fast path read before it in its result.</summary>
    public void Prepare(in FileRequest request)
    {
        _write = request.Kind is RequestKind.Write or RequestKind.WriteGather;
        _vectorCount = 0;
        _vectorIndex = 0;
        // The buffers are pinned first: ReleaseResources unpins them when the rest fails.
        switch (request.Kind)
        {
            case RequestKind.Read:
                _pin = request.Destination.Pin();
                _remaining = (uint)Math.Min(request.Destination.Length, LinuxConstants.MaxReadWriteCount);
                break;
            case RequestKind.Write:
                _pin = request.Source.Pin();
                _remaining = (uint)request.Source.Length;
                break;
            case RequestKind.ReadScatter:
                PinVectors(new ScatterBuffers(request.Destinations!), request.Destinations!.Count);
                break;
            default:
                PinVectors(new GatherBuffers(request.Sources!), request.Sources!.Count);
                SkipEmptyVectors(); // the router sent no all-empty write here; leading empty buffers are skipped
                break;
        }
        _address = (byte*)_pin.Pointer;
        _prefix = request.Kind == RequestKind.Read ? request.Prefix : 0;
        Begin(request.Handle, fd: -1, request.Offset);
    }

    private void PinVectors<TBuffers>(TBuffers buffers, int count)
        where TBuffers : IBufferList
    {
        if (count > _vectorCapacity)
        {
            int capacity = Math.Max(count, Math.Max(4, _vectorCapacity * 2));
            _vectors = (IoVector*)NativeMemory.Realloc(_vectors, (nuint)capacity * (nuint)sizeof(IoVector));
            _vectorCapacity = capacity;
        }
        _vectorPins = PinnedIovecs.Pin(buffers, count, _vectors, _vectorCapacity);
        _vectorCount = count;
    }

    /// <summary>Makes the prepared read request <paramref name="index"/> of <paramref name="batch"/> (before it is armed).</summary>
    internal void JoinBatch(IoUringBatch batch, int index)
    {
        _batch = batch;
        _batchIndex = index;
    }

    internal override void FillSqe(IoUringSqe* sqe)
    {
        sqe->Fd = _fd;
        sqe->UserData = UserData;
        sqe->Offset = _offset >= 0 ? (ulong)_offset : ulong.MaxValue; // -1: the current position, for handles without positions
        if (_vectorCount == 0)
        {
            sqe->Opcode = _write ? IORING_OP_WRITE : IORING_OP_READ;
            sqe->Address = (ulong)_address;
            sqe->Length = _remaining;
            return;
        }
        sqe->Opcode = _write ? IORING_OP_WRITEV : IORING_OP_READV;
        sqe->Address = (ulong)(_vectors + _vectorIndex);
        sqe->Length = (uint)Math.Min(_vectorCount - _vectorIndex, LinuxConstants.IOV_MAX);
    }

    private protected override bool OnResult(int result)
    {
        if (result < 0)
        {
            return OnTransferError(-result);
        }
        _transferred += result;
        if (!_write)
        {
            // One READ (or READV over at most IOV_MAX buffers) like System.IO's single pread/preadv: callers loop.
            Succeed(_prefix + _transferred);
            return false;
        }
        Advance(result);
        bool done;
        if (_vectorCount == 0)
        {
            _address += result;
            _remaining -= (uint)result;
            done = _remaining == 0;
        }
        else
        {
            IoVector* vectors = _vectors + _vectorIndex;
            int count = _vectorCount - _vectorIndex;
            PositionalIo.Advance(ref vectors, ref count, (nuint)result);
            _vectorIndex = (int)(vectors - _vectors);
            SkipEmptyVectors();
            done = _vectorIndex == _vectorCount;
        }
        if (!done)
        {
            return ContinueUnlessCancelled();
        }
        Succeed(_transferred);
        return false;
    }

    private void SkipEmptyVectors()
    {
        while (_vectorIndex < _vectorCount && _vectors[_vectorIndex].Count == 0)
        {
            _vectorIndex++;
        }
    }

    // A batch's read was never handed out as a ValueTask: it goes back to the pool here, its outcome copied out.
    private protected override void Deliver()
    {
        if (_batch is null)
        {
            base.Deliver();
            return;
        }
        IoUringBatch batch = _batch;
        int index = _batchIndex;
        _batch = null;
        (long result, Exception? error) = TakeOutcome();
        _engine.Operations.Return(this);
        batch.MemberCompleted(index, result, error, onRing: true);
    }

    internal override int DecideFault() => DecideTransferFault(_vectorCount == 0
        ? (_write ? SyscallKind.Write : SyscallKind.Read)
        : (_write ? SyscallKind.WriteVector : SyscallKind.ReadVector));

    internal override void ApplyFault(IoUringSqe* sqe)
    {
        if (_vectorCount == 0 || !_shortenNext)
        {
            base.ApplyFault(sqe);
            return;
        }
        _shortenNext = false;
        // READV/WRITEV: the kernel gets half the bytes; completion logic still measures against the whole chunk.
        int chunk = (int)sqe->Length;
        if (_cutCapacity < chunk)
        {
            _cutVectors = (IoVector*)NativeMemory.Realloc(_cutVectors, (nuint)chunk * (nuint)sizeof(IoVector));
            _cutCapacity = chunk;
        }
        sqe->Length = (uint)SyscallSeam.CutVectors((IoVector*)sqe->Address, chunk, _cutVectors);
        sqe->Address = (ulong)_cutVectors;
    }

    internal override void ReleaseResources()
    {
        _pin.Dispose();
        _pin = default;
        _vectorPins.Dispose();
        _vectorCount = 0;
        _address = null;
        base.ReleaseResources();
    }

    internal override void FreeNativeMemory()
    {
        NativeMemory.Free(_vectors);
        _vectors = null;
        _vectorCapacity = 0;
        NativeMemory.Free(_cutVectors);
        _cutVectors = null;
        _cutCapacity = 0;
    }

    internal override bool ReturnToPool() => _engine.Operations.Transfers.Return(this);
}
