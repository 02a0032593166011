using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Interop;

namespace Spindle.Syscalls;

/// <summary>
/// The synchronous calls on a <see cref="SafeFileHandle"/>, counted by the meter. Each system call holds a reference
/// on the handle for its length (the imports take the handle), so a concurrent <c>Dispose</c> cannot close the
/// descriptor under it. A read or write counts under the engine whose router ran it here (<c>routedBy</c>) and the
/// mechanism that ran it (<c>ranOn</c>: the caller's thread, a pool thread, a thread of Spindle's own); only the Sync
/// engine's are timed here, as another engine's is an asynchronous call that its caller times whole
/// (<see cref="AsyncTiming"/>), once.
/// </summary>
internal static class HandleIo
{
    internal static int Read(SafeFileHandle handle, Span<byte> buffer, long fileOffset, IoEngine routedBy = IoEngine.Sync, IoMechanism ranOn = IoMechanism.Inline)
    {
        long started = routedBy == IoEngine.Sync ? SpindleMetrics.StartTiming() : 0;
        int read = PositionalIo.Read(handle, buffer, fileOffset, SafeFileHandleInternals.GetPath(handle));
        SpindleMetrics.Operation(routedBy, IoDirection.Read, read, ranOn);
        SpindleMetrics.Duration(started, routedBy, IoDirection.Read);
        return read;
    }

    internal static void Write(SafeFileHandle handle, ReadOnlySpan<byte> buffer, long fileOffset, IoEngine routedBy = IoEngine.Sync, IoMechanism ranOn = IoMechanism.Inline)
    {
        long started = routedBy == IoEngine.Sync ? SpindleMetrics.StartTiming() : 0;
        PositionalIo.Write(handle, buffer, fileOffset, SafeFileHandleInternals.GetPath(handle));
        SpindleMetrics.Operation(routedBy, IoDirection.Write, buffer.Length, ranOn);
        SpindleMetrics.Duration(started, routedBy, IoDirection.Write);
    }

    internal static long ReadScatter(SafeFileHandle handle, IReadOnlyList<Memory<byte>> buffers, long fileOffset, IoEngine routedBy = IoEngine.Sync, IoMechanism ranOn = IoMechanism.Inline)
    {
        long started = routedBy == IoEngine.Sync ? SpindleMetrics.StartTiming() : 0;
        long read = PositionalIo.ReadScatter(handle, buffers, fileOffset, SafeFileHandleInternals.GetPath(handle));
        SpindleMetrics.Operation(routedBy, IoDirection.Read, read, ranOn);
        SpindleMetrics.Duration(started, routedBy, IoDirection.Read);
        return read;
    }

    internal static void WriteGather(SafeFileHandle handle, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset, IoEngine routedBy = IoEngine.Sync, IoMechanism ranOn = IoMechanism.Inline)
    {
        long started = routedBy == IoEngine.Sync ? SpindleMetrics.StartTiming() : 0;
        long written = PositionalIo.WriteGather(handle, buffers, fileOffset, SafeFileHandleInternals.GetPath(handle));
        SpindleMetrics.Operation(routedBy, IoDirection.Write, written, ranOn);
        SpindleMetrics.Duration(started, routedBy, IoDirection.Write);
    }

    internal static unsafe long GetLength(SafeFileHandle handle)
    {
        if (Libc.FStatLayoutKnown)
        {
            if (Libc.FStatSize(handle, out long size) != 0)
            {
                throw IoErrors.ForErrno(Errno.Last, SafeFileHandleInternals.GetPath(handle));
            }
            return size;
        }
        StatxBuffer status;
        if (Libc.Statx(handle, string.Empty, LinuxConstants.AT_EMPTY_PATH, LinuxConstants.STATX_SIZE, &status) != 0)
        {
            throw IoErrors.ForErrno(Errno.Last, SafeFileHandleInternals.GetPath(handle));
        }
        return (long)status.Size;
    }

    internal static void SetLength(SafeFileHandle handle, long length)
    {
        int result;
        do
        {
            result = Libc.FTruncate(handle, length);
        }
        while (result < 0 && Errno.Last == Errno.EINTR);
        if (result < 0)
        {
            throw IoErrors.ForErrno(Errno.Last, SafeFileHandleInternals.GetPath(handle));
        }
    }

    internal static void FlushToDisk(SafeFileHandle handle)
    {
        if (Libc.FSync(handle) < 0)
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

    internal static int Fd(SafeFileHandle handle) => (int)handle.DangerousGetHandle();

    private static bool IsPathOnly(SafeFileHandle handle)
    {
        int flags = Libc.Fcntl(handle, LinuxConstants.F_GETFL, 0);
        return flags >= 0 && (flags & OpenFlags.O_PATH) != 0;
    }
}
