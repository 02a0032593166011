using System.Runtime.InteropServices;
using System.Text;
using Spindle.Interop;
using static Spindle.Interop.IoUringConstants;

namespace Spindle.Engines.IoUring;

/// <summary>
/// Opening and closing on the ring (<c>IORING_OP_OPENAT</c>, <c>IORING_OP_CLOSE</c>). An open completes with the
/// descriptor or the negated errno, which the caller turns into System.IO's exception off the ring thread
/// (<see cref="Handles.FileOpener"/>); only a cancellation completes as an exception. A descriptor that arrives after
/// its open was cancelled is closed on the ring before the operation completes as cancelled, so a cancelled open
/// never leaves a descriptor behind. Both opcodes are as old as the ring's own minimum kernel (5.6).
/// </summary>
internal sealed unsafe partial class IoUringOperation
{
    // The kernel's "restart the system call" codes, which a cancelled open waiting in an io-wq worker may report.
    private const int ERESTARTSYS = 512;
    private const int ERESTART_RESTARTBLOCK = 516;

    private byte* _path;                  // Open: the path, NUL-terminated UTF-8, kept until the CQE; reused across operations
    private int _pathCapacity;
    private int _openFlags;               // Open: the open(2) flags
    private int _openMode;                // Open: the permissions of a created file
    private bool _closingLateDescriptor;  // Open: cancelled, but the kernel opened the file anyway; its close is on the ring

    /// <summary>An <c>openat(AT_FDCWD, path, flags, mode)</c>; the path is copied to native memory the kernel reads until the CQE.</summary>
    internal void PrepareOpen(string fullPath, int flags, int permissions)
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
        BeginWithoutHandle(OperationKind.Open, LinuxConstants.AT_FDCWD);
        _openFlags = flags;
        _openMode = permissions;
    }

    /// <summary>A <c>close(fd)</c> of a descriptor no one else holds any more.</summary>
    internal void PrepareClose(int fd) => BeginWithoutHandle(OperationKind.Close, fd);

    private void BeginWithoutHandle(OperationKind kind, int fd)
    {
        Generation++;
        _kind = kind;
        _offset = -1;
        _transferred = 0;
        _prefix = 0;
        _vectorCount = 0;
        _vectorIndex = 0;
        _cancelRequested = false;
        _closingLateDescriptor = false;
        _handle = default;
        _fd = fd;
    }

    private void FillFileSqe(IoUringSqe* sqe)
    {
        sqe->Offset = 0;
        if (_kind == OperationKind.Close || _closingLateDescriptor)
        {
            sqe->Opcode = IORING_OP_CLOSE;
            return;
        }
        sqe->Opcode = IORING_OP_OPENAT;
        sqe->Address = (ulong)_path;
        sqe->Length = (uint)_openMode;
        sqe->OpFlags = (uint)_openFlags;
    }

    /// <summary>The CQE of an open or a close (ring thread); true when the operation needs another SQE.</summary>
    private bool OnFileCompletion(int result)
    {
        if (_kind == OperationKind.Close || _closingLateDescriptor)
        {
            // A close's errors are ignored, as SafeFileHandle's own close ignores them.
            if (_closingLateDescriptor)
            {
                _closingLateDescriptor = false;
                Cancel();
            }
            else
            {
                Finish(result, null);
            }
            return false;
        }
        if (result >= 0)
        {
            if (_cancelRequested)
            {
                // The cancellation came too late for the kernel: close what it opened, then report the cancellation.
                _fd = result;
                _closingLateDescriptor = true;
                return true;
            }
            Finish(result, null);
            return false;
        }
        if (result == -Errno.EINTR || result == -Errno.ECANCELED || result is <= -ERESTARTSYS and >= -ERESTART_RESTARTBLOCK)
        {
            // Interrupted (a worker's wait for a FIFO's other end, a signal) or cancelled: again, unless the caller cancelled.
            return ContinueUnlessCancelled();
        }
        Finish(result, null);
        return false;
    }

    private void FreePath()
    {
        NativeMemory.Free(_path);
        _path = null;
        _pathCapacity = 0;
    }
}
