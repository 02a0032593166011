using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Interop;

namespace Spindle.Syscalls;

/// <summary>
/// <see cref="PositionalIo"/> on a <see cref="SafeFileHandle"/>: holds a reference on the handle for
/// the length of the call, so that a concurrent <c>Dispose</c> cannot close the descriptor under it. A read or write
/// counts under the engine whose router ran it here (<c>routedBy</c>); only the Sync engine's are timed here, as
/// another engine's is an asynchronous call that its caller times whole (<see cref="AsyncTiming"/>), once.
/// </summary>
internal static class HandleIo
{
    internal static int Read(SafeFileHandle handle, Span<byte> buffer, long fileOffset, IoEngine routedBy = IoEngine.Sync)
    {
        bool added = false;
        try
        {
            handle.DangerousAddRef(ref added);
            long started = routedBy == IoEngine.Sync ? SpindleMetrics.StartTiming() : 0;
            int read = PositionalIo.Read(Fd(handle), buffer, fileOffset, SafeFileHandleInternals.GetPath(handle));
            SpindleMetrics.Operation(routedBy, IoDirection.Read, read, IoMechanism.Inline);
            SpindleMetrics.Duration(started, routedBy, IoDirection.Read);
            return read;
        }
        finally
        {
            if (added)
            {
                handle.DangerousRelease();
            }
        }
    }

    internal static void Write(SafeFileHandle handle, ReadOnlySpan<byte> buffer, long fileOffset, IoEngine routedBy = IoEngine.Sync)
    {
        bool added = false;
        try
        {
            handle.DangerousAddRef(ref added);
            long started = routedBy == IoEngine.Sync ? SpindleMetrics.StartTiming() : 0;
            PositionalIo.Write(Fd(handle), buffer, fileOffset, SafeFileHandleInternals.GetPath(handle));
            SpindleMetrics.Operation(routedBy, IoDirection.Write, buffer.Length, IoMechanism.Inline);
            SpindleMetrics.Duration(started, routedBy, IoDirection.Write);
        }
        finally
        {
            if (added)
            {
                handle.DangerousRelease();
            }
        }
    }

    internal static long ReadScatter(SafeFileHandle handle, IReadOnlyList<Memory<byte>> buffers, long fileOffset, IoEngine routedBy = IoEngine.Sync)
    {
        bool added = false;
        try
        {
            handle.DangerousAddRef(ref added);
            long started = routedBy == IoEngine.Sync ? SpindleMetrics.StartTiming() : 0;
            long read = PositionalIo.ReadScatter(Fd(handle), buffers, fileOffset, SafeFileHandleInternals.GetPath(handle));
            SpindleMetrics.Operation(routedBy, IoDirection.Read, read, IoMechanism.Inline);
            SpindleMetrics.Duration(started, routedBy, IoDirection.Read);
            return read;
        }
        finally
        {
            if (added)
            {
                handle.DangerousRelease();
            }
        }
    }

    internal static void WriteGather(SafeFileHandle handle, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset, IoEngine routedBy = IoEngine.Sync)
    {
        bool added = false;
        try
        {
            handle.DangerousAddRef(ref added);
            long started = routedBy == IoEngine.Sync ? SpindleMetrics.StartTiming() : 0;
            long written = PositionalIo.WriteGather(Fd(handle), buffers, fileOffset, SafeFileHandleInternals.GetPath(handle));
            SpindleMetrics.Operation(routedBy, IoDirection.Write, written, IoMechanism.Inline);
            SpindleMetrics.Duration(started, routedBy, IoDirection.Write);
        }
        finally
        {
            if (added)
            {
                handle.DangerousRelease();
            }
        }
    }

    internal static unsafe long GetLength(SafeFileHandle handle)
    {
        bool added = false;
        try
        {
            handle.DangerousAddRef(ref added);
            if (Libc.FStatLayoutKnown)
            {
                if (Libc.FStatSize(Fd(handle), out long size) != 0)
                {
                    throw IoErrors.ForErrno(Errno.Last, SafeFileHandleInternals.GetPath(handle));
                }
                return size;
            }
            StatxBuffer status;
            if (Libc.Statx(Fd(handle), string.Empty, LinuxConstants.AT_EMPTY_PATH, LinuxConstants.STATX_SIZE, &status) != 0)
            {
                throw IoErrors.ForErrno(Errno.Last, SafeFileHandleInternals.GetPath(handle));
            }
            return (long)status.Size;
        }
        finally
        {
            if (added)
            {
                handle.DangerousRelease();
            }
        }
    }

    internal static void SetLength(SafeFileHandle handle, long length)
    {
        bool added = false;
        try
        {
            handle.DangerousAddRef(ref added);
            int result;
            do
            {
                result = Libc.FTruncate(Fd(handle), length);
            }
            while (result < 0 && Errno.Last == Errno.EINTR);
            if (result < 0)
            {
                throw IoErrors.ForErrno(Errno.Last, SafeFileHandleInternals.GetPath(handle));
            }
        }
        finally
        {
            if (added)
            {
                handle.DangerousRelease();
            }
        }
    }

    internal static void FlushToDisk(SafeFileHandle handle)
    {
        bool added = false;
        try
        {
            handle.DangerousAddRef(ref added);
            if (Libc.FSync(Fd(handle)) < 0)
            {
                int errno = Errno.Last;
                // Special files that cannot be synchronised (pipes, some devices) are not an error, as in System.IO,
                // nor is an O_PATH descriptor, which wrote nothing to flush (System.IO's FlushToDisk succeeds).
                if (errno is not (Errno.EROFS or Errno.EINVAL or Errno.EOPNOTSUPP) && !(errno == Errno.EBADF && IsPathOnly(handle)))
                {
                    throw IoErrors.ForErrno(errno, SafeFileHandleInternals.GetPath(handle));
                }
            }
        }
        finally
        {
            if (added)
            {
                handle.DangerousRelease();
            }
        }
    }

    internal static int Fd(SafeFileHandle handle) => (int)handle.DangerousGetHandle();

    private static bool IsPathOnly(SafeFileHandle handle)
    {
        int flags = Libc.Fcntl(Fd(handle), LinuxConstants.F_GETFL, 0);
        return flags >= 0 && (flags & OpenFlags.O_PATH) != 0;
    }
}
