using System.Runtime.InteropServices;
using System.Text;
using Spindle.Interop;
using static Spindle.Interop.IoUringConstants;

namespace Spindle.Engines.IoUring;

/// <summary>
/// An open on the ring (<c>IORING_OP_OPENAT</c>), or a close that may wait (<c>IORING_OP_CLOSE</c>). An open completes
/// with the descriptor or the negated errno; only a cancellation completes as an exception, and a descriptor that
/// arrives after it is closed first, so a cancelled open leaves none behind. A close is not cancellable; its errors are
/// ignored, as SafeFileHandle's are.
/// </summary>
internal sealed unsafe class RingOpenAt(IoUringEngine engine, int id) : RingOperation(engine, id), IRingOperationKind<RingOpenAt>
{
    // The kernel's "restart the system call" codes, which a cancelled open waiting in an io-wq worker may report.
    private const int ERESTARTSYS = 512;
    private const int ERESTART_RESTARTBLOCK = 516;

    private enum Step : byte
    {
        Open,      // openat(AT_FDCWD, path, flags, mode)
        Close,     // close(fd), asked for
        CloseLate, // cancelled, but the kernel opened the file anyway: its close, then the cancellation
    }

    private byte* _path;                  // the path, NUL-terminated UTF-8, kept until the CQE; reused across operations
    private int _pathCapacity;
    private int _openFlags;               // the open(2) flags
    private int _openMode;                // the permissions of a created file
    private Step _step;

    static RingOpenAt IRingOperationKind<RingOpenAt>.Create(IoUringEngine engine, int id) => new(engine, id);

    internal override bool WaitsInWorker => true;

    // The close of a descriptor opened after the cancellation runs to its end.
    private protected override bool GoesOnAfterCancel => _step == Step.CloseLate;

    /// <summary>An <c>openat(AT_FDCWD, path, flags, mode)</c>; the path is copied to native memory the kernel reads until the CQE.</summary>
    internal void Prepare(string fullPath, int flags, int permissions)
    {
        int length = Encoding.UTF8.GetByteCount(fullPath);
        if (length + 1 > _pathCapacity)
        {
            int capacity = Math.Max(length + 1, Math.Max(256, _pathCapacity * 2));
            _path = (byte*)NativeMemory.Realloc(_path, (nuint)capacity);
            _pathCapacity = capacity;
        }
        Encoding.UTF8.GetBytes(fullPath, new Span<byte>(_path, length));
        _path[length] = 0;
        Begin(handle: null, LinuxConstants.AT_FDCWD, offset: -1);
        _step = Step.Open;
        _openFlags = flags;
        _openMode = permissions;
    }

    /// <summary>A <c>close(fd)</c>.</summary>
    internal void PrepareClose(int fd)
    {
        Begin(handle: null, fd, offset: -1);
        _step = Step.Close;
    }

    internal override void FillSqe(IoUringSqe* sqe)
    {
        sqe->Fd = _fd;
        sqe->UserData = UserData;
        if (_step != Step.Open)
        {
            sqe->Opcode = IORING_OP_CLOSE;
            return;
        }
        sqe->Opcode = IORING_OP_OPENAT;
        sqe->Address = (ulong)_path;
        sqe->Length = (uint)_openMode;
        sqe->OpFlags = (uint)_openFlags;
    }

    private protected override bool OnResult(int result)
    {
        if (_step == Step.CloseLate)
        {
            _step = Step.Close;
            Cancel();
            return false;
        }
        if (result >= 0 && _step == Step.Open && _cancelRequested)
        {
            // The cancellation came too late for the kernel: close what it opened, then report the cancellation.
            _fd = result;
            _step = Step.CloseLate;
            return true;
        }
        if (_step == Step.Open && (result == -Errno.EINTR || result == -Errno.ECANCELED || result is <= -ERESTARTSYS and >= -ERESTART_RESTARTBLOCK))
        {
            // Interrupted (a worker's wait for a FIFO's other end, a signal) or cancelled: again, unless the caller cancelled.
            return ContinueUnlessCancelled();
        }
        Finish(result, null);
        return false;
    }

    internal override void FreeNativeMemory()
    {
        NativeMemory.Free(_path);
        _path = null;
        _pathCapacity = 0;
    }

    internal override bool ReturnToPool() => _engine.Operations.Opens.Return(this);
}
