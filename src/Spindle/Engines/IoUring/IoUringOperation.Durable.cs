using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Interop;
using Spindle.Syscalls;
using static Spindle.Interop.IoUringConstants;

namespace Spindle.Engines.IoUring;

/// <summary>
/// The durability requests on the ring: <c>fdatasync</c> (<c>IORING_OP_FSYNC</c> with <c>IORING_FSYNC_DATASYNC</c>) and
/// a durable write — one <c>IORING_OP_WRITE</c> with <c>RWF_DSYNC</c>, or where the kernel refuses the flag a write
/// and an <c>fdatasync</c> linked in one submission (<c>IOSQE_IO_LINK</c>). The linked pair is one operation with two
/// SQEs and two CQEs; it stays with the kernel until both arrived. Success is reported only for a write whose every
/// byte was written and then covered by a sync that succeeded: a short write breaks the link (the sync completes with
/// <c>-ECANCELED</c>) or is followed by a sync that covered only what was written, and in both cases the rest is
/// written and the sync submitted again.
/// </summary>
internal sealed unsafe partial class IoUringOperation
{
    private const byte IOSQE_IO_LINK = 1 << 2;     // the next SQE starts only after this one completed in full
    private const uint IORING_FSYNC_DATASYNC = 1;  // fsync_flags: fdatasync rather than fsync
    private const ulong LinkedSyncTag = 1UL << 63; // flipped in the user data of the linked sync's SQE, to tell its CQE apart

    private enum DurableStep : byte
    {
        DataSyncWrite, // one IORING_OP_WRITE with RWF_DSYNC: every byte it reports written is durable
        WriteThenSync, // IORING_OP_WRITE linked to IORING_OP_FSYNC(DATASYNC)
        SyncOnly,      // the write is done; the sync after it must be submitted again
    }

    private DurableStep _step;  // the next SQE(s) of a durable write
    private int _cqesPending;   // CQEs still to come for the SQEs in flight (2 for a linked pair)
    private int _writeResult;   // the linked write's CQE result
    private int _syncResult;    // the linked sync's CQE result

    /// <summary>SQEs the next step takes: 2 for a write linked to its sync, else 1 (ring thread).</summary>
    internal int SqeCount => _kind == OperationKind.WriteDurable && _step == DurableStep.WriteThenSync ? 2 : 1;

    /// <summary>Whether a CQE with <paramref name="userData"/> belongs to this operation's SQEs in flight.</summary>
    internal bool Owns(ulong userData) => userData == UserData || (SqeCount == 2 && userData == (UserData ^ LinkedSyncTag));

    internal void PrepareDataSync(SafeFileHandle handle) => Begin(OperationKind.DataSync, handle, -1);

    internal void PrepareWriteDurable(SafeFileHandle handle, ReadOnlyMemory<byte> buffer, long offset, bool dataSyncFlag)
    {
        Begin(OperationKind.WriteDurable, handle, offset);
        _step = dataSyncFlag ? DurableStep.DataSyncWrite : DurableStep.WriteThenSync;
        _pin = buffer.Pin();
        _address = (byte*)_pin.Pointer;
        _remaining = (uint)buffer.Length;
    }

    /// <summary>
    /// A CQE of this operation arrived (ring thread). True while another is due (the first of a linked pair): the
    /// operation stays with the kernel, and <see cref="OnCompletion"/> runs once both results are in.
    /// </summary>
    internal bool AwaitsAnotherCompletion(ulong userData, int result)
    {
        if (SqeCount == 1)
        {
            return false;
        }
        if (userData == UserData)
        {
            _writeResult = result;
        }
        else
        {
            _syncResult = result;
        }
        return --_cqesPending > 0;
    }

    private void FillDurableSqe(IoUringSqe* sqe)
    {
        _cqesPending = SqeCount;
        if (_kind == OperationKind.DataSync || _step == DurableStep.SyncOnly)
        {
            FillDataSync(sqe);
            _engine.CountDataSync();
            return;
        }
        sqe->Opcode = IORING_OP_WRITE;
        sqe->Address = (ulong)_address;
        sqe->Length = _remaining; // the fault seam may shorten it after this (ApplyFault)
        if (_step == DurableStep.DataSyncWrite)
        {
            sqe->OpFlags = Libc.RWF_DSYNC;
            _engine.CountDataSyncWrite();
            return;
        }
        sqe->Flags = IOSQE_IO_LINK;
        _engine.CountLinkedWrite();
    }

    /// <summary>Fills the second SQE of a linked write: the <c>fdatasync</c> that runs only if the write completed in full (ring thread).</summary>
    internal void FillLinkedSqe(IoUringSqe* sqe)
    {
        sqe->Fd = _fd;
        sqe->UserData = UserData ^ LinkedSyncTag;
        FillDataSync(sqe);
    }

    private static void FillDataSync(IoUringSqe* sqe)
    {
        sqe->Opcode = IORING_OP_FSYNC;
        sqe->Offset = 0;
        sqe->Length = 0;
        sqe->Address = 0;
        sqe->OpFlags = IORING_FSYNC_DATASYNC;
    }

    // The fault seam has no kind for syncs; it answers for the write, and a failed linked write cancels its sync as the kernel would.
    private int DecideDurableFault()
    {
        if (_step == DurableStep.SyncOnly)
        {
            return 0;
        }
        SyscallFault fault = SyscallSeam.Decide(_fd, SyscallKind.Write);
        _shortenNext = fault == SyscallFault.ShortTransfer && SyscallSeam.Plausible(_offset);
        int errno = SyscallSeam.ErrnoOf(fault);
        if (errno != 0 && _step == DurableStep.WriteThenSync)
        {
            _writeResult = -errno;
            _syncResult = -Errno.ECANCELED;
        }
        return errno;
    }

    // Ring thread, from OnCompletion: true when another SQE is needed.
    private bool OnDurableCompletion(int result)
    {
        if (_kind == OperationKind.DataSync || _step == DurableStep.SyncOnly)
        {
            return OnSyncResult(result);
        }
        if (_step == DurableStep.DataSyncWrite)
        {
            if (result >= 0)
            {
                return OnWritten(result);
            }
            if (-result is Errno.EINVAL or Errno.EOPNOTSUPP && _transferred == 0)
            {
                // The kernel or the file system refused RWF_DSYNC: this write, and every later one, takes the linked pair.
                _engine.RefuseDataSyncWrites();
                _step = DurableStep.WriteThenSync;
                return ContinueUnlessCancelled();
            }
            return OnDurableWriteError(-result);
        }
        int written = _writeResult;
        int synced = _syncResult;
        if (written < 0)
        {
            return OnDurableWriteError(-written);
        }
        Wrote(written);
        if (_remaining > 0)
        {
            // A short write: the link broke (the sync got -ECANCELED), or the sync covered only the bytes written. Either
            // way nothing is reported yet; a sync that failed may have dropped the pages, so it fails the write.
            if (synced < 0 && synced != -Errno.ECANCELED && synced != -Errno.EINTR && !IsUnsyncable(-synced))
            {
                Fail(IoErrors.ForErrno(-synced, SafeFileHandleInternals.GetPath(_handle.Handle!)));
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

    private bool OnWritten(int result)
    {
        Wrote(result);
        if (_remaining == 0)
        {
            Succeed();
            return false;
        }
        return ContinueUnlessCancelled(); // each RWF_DSYNC write made what it wrote durable; the rest follows the same way
    }

    private void Wrote(int result)
    {
        _transferred += result;
        _address += result;
        _remaining -= (uint)result;
        Advance(result);
    }

    private bool OnDurableWriteError(int errno)
    {
        if (errno == Errno.EINTR || errno == Errno.ECANCELED && !CancelRequested)
        {
            return ContinueUnlessCancelled();
        }
        if (errno == Errno.ECANCELED)
        {
            Cancel(); // nothing of this operation was written
            return false;
        }
        if (_offset >= 0 && errno is Errno.ESPIPE or Errno.ENXIO)
        {
            _offset = -1; // a handle that claimed positions but has none, as in the synchronous path
            return ContinueUnlessCancelled();
        }
        Fail(IoErrors.ForErrno(errno, SafeFileHandleInternals.GetPath(_handle.Handle!)));
        return false;
    }

    private bool OnSyncResult(int result)
    {
        if (result >= 0 || IsUnsyncable(-result))
        {
            Succeed();
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
        Fail(IoErrors.ForErrno(errno, SafeFileHandleInternals.GetPath(_handle.Handle!)));
        return false;
    }

    // Special files that cannot be synchronised are not an error, as for fsync in System.IO.
    private static bool IsUnsyncable(int errno) => errno is Errno.EROFS or Errno.EINVAL or Errno.EOPNOTSUPP;
}
