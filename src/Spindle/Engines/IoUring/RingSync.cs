using System.Buffers;
using Spindle.Diagnostics;
using Spindle.Interop;
using static Spindle.Interop.IoUringConstants;

namespace Spindle.Engines.IoUring;

/// <summary>
/// <c>fsync</c> or <c>fdatasync</c> on the ring, alone or making a write durable: one <c>RWF_DSYNC</c> write, or, where
/// the kernel refuses the flag, a write and an <c>fdatasync</c> linked in one submission (two SQEs, with the kernel until
/// both CQEs arrived). Success is reported only once every byte was written and covered by a sync that succeeded; after
/// a short write the rest is written and the sync submitted again. Special files that cannot be synced succeed, as in System.IO.
/// </summary>
internal sealed unsafe class RingSync(IoUringEngine engine, int id) : RingOperation(engine, id), IRingOperationKind<RingSync>, IRingFileRequest
{
    private const byte IOSQE_IO_LINK = 1 << 2;     // the next SQE starts only after this one completed in full
    private const uint IORING_FSYNC_DATASYNC = 1;  // fsync_flags: fdatasync rather than fsync
    private const ulong LinkedSyncTag = 1UL << 63; // flipped in the user data of the linked sync's SQE, to tell its CQE apart

    private enum DurableStep : byte
    {
        DataSyncWrite, // one IORING_OP_WRITE with RWF_DSYNC: every byte it reports written is durable
        WriteThenSync, // IORING_OP_WRITE linked to IORING_OP_FSYNC(DATASYNC)
        SyncOnly,      // a sync alone, or the write is done and the sync after it must be submitted again
    }

    private MemoryHandle _pin;      // the bytes, pinned until the last CQE
    private byte* _address;         // where the next byte comes from
    private uint _remaining;        // bytes still to write
    private DurableStep _step;      // the next SQE(s)
    private bool _dataOnly;         // fdatasync rather than fsync (always, after a write)
    private int _cqesPending;       // CQEs still to come for the SQEs in flight (2 for a linked pair)
    private int _writeResult;       // the linked write's CQE result
    private int _syncResult;        // the linked sync's CQE result

    static RingSync IRingOperationKind<RingSync>.Create(IoUringEngine engine, int id) => new(engine, id);

    internal override bool WaitsInWorker => true;

    // A write that has handed bytes to the kernel goes on to the end (its sync included).
    private protected override bool GoesOnAfterCancel => _transferred > 0;

    internal override int SqeCount => _step == DurableStep.WriteThenSync ? 2 : 1;

    internal override bool Owns(ulong userData) => userData == UserData || (SqeCount == 2 && userData == (UserData ^ LinkedSyncTag));

    /// <summary>An <c>fsync</c>, an <c>fdatasync</c>, or a durable write of the request's bytes.</summary>
    public void Prepare(in FileRequest request)
    {
        Begin(request.Handle, fd: -1, request.Offset);
        _dataOnly = request.Kind != RequestKind.Flush;
        if (request.Kind != RequestKind.WriteDurable)
        {
            _step = DurableStep.SyncOnly;
            return;
        }
        _step = _engine.DataSyncWritesRefused ? DurableStep.WriteThenSync : DurableStep.DataSyncWrite;
        _pin = request.Source.Pin();
        _address = (byte*)_pin.Pointer;
        _remaining = (uint)request.Source.Length;
    }

    internal override bool AwaitsAnotherCompletion(ulong userData, int result)
    {
        if (SqeCount == 1)
        {
            return false;
        }
        (userData == UserData ? ref _writeResult : ref _syncResult) = result;
        return --_cqesPending > 0;
    }

    internal override void FillSqe(IoUringSqe* sqe)
    {
        _cqesPending = SqeCount;
        if (_step == DurableStep.SyncOnly)
        {
            FillSync(sqe, UserData, _dataOnly);
            if (_dataOnly)
            {
                EngineProbe.Current?.DurableSqe(_engine.Thread, DurableSqeKind.DataSync);
            }
            return;
        }
        sqe->Fd = _fd;
        sqe->UserData = UserData;
        sqe->Opcode = IORING_OP_WRITE;
        sqe->Offset = _offset >= 0 ? (ulong)_offset : ulong.MaxValue;
        sqe->Address = (ulong)_address;
        sqe->Length = _remaining; // the fault seam may shorten it after this (ApplyFault)
        if (_step == DurableStep.DataSyncWrite)
        {
            sqe->OpFlags = Libc.RWF_DSYNC;
            EngineProbe.Current?.DurableSqe(_engine.Thread, DurableSqeKind.DataSyncWrite);
            return;
        }
        sqe->Flags = IOSQE_IO_LINK;
        EngineProbe.Current?.DurableSqe(_engine.Thread, DurableSqeKind.LinkedWrite);
    }

    /// <summary>Fills the second SQE of a linked write: the <c>fdatasync</c> that runs only if the write completed in full (ring thread).</summary>
    internal override void FillLinkedSqe(IoUringSqe* sqe) => FillSync(sqe, UserData ^ LinkedSyncTag, dataOnly: true);

    // The SQE comes zeroed (Ring.TryGetSqe): a sync needs no offset, length or address.
    private void FillSync(IoUringSqe* sqe, ulong userData, bool dataOnly)
    {
        sqe->Fd = _fd;
        sqe->UserData = userData;
        sqe->Opcode = IORING_OP_FSYNC;
        sqe->OpFlags = dataOnly ? IORING_FSYNC_DATASYNC : 0;
    }

    private protected override bool OnResult(int result)
    {
        if (_step == DurableStep.SyncOnly)
        {
            return OnSyncResult(result);
        }
        if (_step == DurableStep.DataSyncWrite)
        {
            if (result >= 0)
            {
                Wrote(result);
                // Each RWF_DSYNC write made what it wrote durable, as a sync that succeeded; the rest follows the same way.
                return _remaining == 0 ? OnSyncResult(0) : ContinueUnlessCancelled();
            }
            if (-result is Errno.EINVAL or Errno.EOPNOTSUPP && _transferred == 0)
            {
                // The kernel or the file system refused RWF_DSYNC: this write, and every later one, takes the linked pair.
                _engine.DataSyncWritesRefused = true;
                _step = DurableStep.WriteThenSync;
                return ContinueUnlessCancelled();
            }
            return OnTransferError(-result);
        }
        int written = _writeResult;
        int synced = _syncResult;
        if (written < 0)
        {
            return OnTransferError(-written);
        }
        Wrote(written);
        if (_remaining > 0)
        {
            // A short write: nothing is reported yet, but a sync that failed may have dropped the pages, so it fails the write.
            if (synced < 0 && synced != -Errno.ECANCELED && synced != -Errno.EINTR && !IsUnsyncable(-synced))
            {
                Fail(IoErrors.ForErrno(-synced, HandlePath));
                return false;
            }
            return ContinueUnlessCancelled();
        }
        if (synced == -Errno.ECANCELED || synced == -Errno.EINTR)
        {
            _step = DurableStep.SyncOnly;
            return true; // every byte is written: the sync runs to its end, whatever the token says
        }
        return OnSyncResult(synced);
    }

    private void Wrote(int result)
    {
        _transferred += result;
        _address += result;
        _remaining -= (uint)result;
        Advance(result);
    }

    // The fault seam has no kind for syncs; it answers for the write, and a failed linked write cancels its sync as the kernel would.
    internal override int DecideFault()
    {
        if (_step == DurableStep.SyncOnly)
        {
            return 0;
        }
        int errno = DecideTransferFault(SyscallKind.Write);
        if (errno != 0 && _step == DurableStep.WriteThenSync)
        {
            _writeResult = -errno;
            _syncResult = -Errno.ECANCELED;
        }
        return errno;
    }

    internal override void ReleaseResources()
    {
        _pin.Dispose();
        _pin = default;
        _address = null;
        base.ReleaseResources();
    }

    internal override bool ReturnToPool() => _engine.Operations.Syncs.Return(this);
}
