using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Interop;

namespace Spindle.Syscalls;

/// <summary>
/// The blocking durability calls: <c>fdatasync</c>, a write that is durable on its own (<c>pwritev2</c> with
/// <c>RWF_DSYNC</c>, else the write and an <c>fdatasync</c>), and the append-then-sync of a group commit.
/// A call reports success only for bytes that were both written and synchronised.
/// </summary>
internal static unsafe class DurableIo
{
    // Set once the kernel said it has no pwritev2 (ENOSYS): every later durable write goes straight to the fallback.
    private static volatile bool s_noWriteFlags;

    /// <summary><c>fdatasync</c> on a handle.</summary>
    internal static void FlushData(SafeFileHandle handle) => DataSync(handle, SafeFileHandleInternals.GetPath(handle));

    /// <summary>A durable write on a handle; <paramref name="mechanism"/> says where it runs.</summary>
    internal static void WriteDurable(SafeFileHandle handle, ReadOnlySpan<byte> buffer, long offset, IoMechanism mechanism = IoMechanism.Inline)
    {
        WriteDurable(handle, buffer, offset, SafeFileHandleInternals.GetPath(handle));
        SpindleMetrics.Operation(IoEngine.Sync, IoDirection.Write, buffer.Length, mechanism);
    }

    /// <summary>
    /// <c>fdatasync</c>: the file's data and the metadata needed to read it back (its size, its block map)
    /// reach the device. Special files that cannot be synchronised are not an error, as for <c>fsync</c> in System.IO.
    /// </summary>
    internal static void DataSync(SafeFileHandle handle, string? path)
    {
        int errno = DataSyncErrno(handle);
        if (errno != 0)
        {
            throw IoErrors.ForErrno(errno, path);
        }
    }

    /// <summary><c>fdatasync</c>, returning 0 or the errno that matters (the ignored ones read as 0).</summary>
    internal static int DataSyncErrno(SafeFileHandle handle)
    {
        while (Libc.FDataSync(handle) < 0)
        {
            int errno = Errno.Last;
            if (errno == Errno.EINTR)
            {
                continue;
            }
            return errno is Errno.EROFS or Errno.EINVAL or Errno.EOPNOTSUPP ? 0 : errno;
        }
        return 0;
    }

    /// <summary>
    /// Writes every byte durably. Each <c>pwritev2(RWF_DSYNC)</c> makes the bytes it reports written durable, so a
    /// short one is continued the same way; where the kernel or the file system refuses the flag the write runs as
    /// usual and one <c>fdatasync</c> follows it. An error at any point throws: success is never reported for a
    /// byte that is not both written and synchronised.
    /// </summary>
    internal static void WriteDurable(SafeFileHandle handle, ReadOnlySpan<byte> buffer, long offset, string? path)
    {
        if (buffer.IsEmpty)
        {
            return;
        }
        fixed (byte* start = &MemoryMarshal.GetReference(buffer))
        {
            byte* pointer = start;
            nuint remaining = (nuint)buffer.Length;
            if (offset >= 0 && !s_noWriteFlags)
            {
                bool wroteAny = false;
                while (remaining > 0)
                {
                    nint result = SyscallSeam.Faults is { } faults ? SyscallSeam.WriteDataSync(faults, handle, pointer, remaining, offset)
                        : Libc.PWriteV2(handle, pointer, remaining, offset, Libc.RWF_DSYNC);
                    if (result < 0)
                    {
                        int errno = Errno.Last;
                        if (errno == Errno.EINTR)
                        {
                            continue;
                        }
                        if (errno == Errno.ENOSYS)
                        {
                            s_noWriteFlags = true;
                        }
                        // The flag refused (old kernel, a file system without it) or no position (a pipe): the fallback.
                        if (!wroteAny && errno is Errno.ENOSYS or Errno.EOPNOTSUPP or Errno.EINVAL or Errno.ESPIPE or Errno.ENXIO)
                        {
                            if (errno is Errno.ESPIPE or Errno.ENXIO)
                            {
                                offset = -1;
                            }
                            break;
                        }
                        throw IoErrors.ForErrno(errno, path);
                    }
                    wroteAny = true;
                    pointer += result;
                    remaining -= (nuint)result;
                    offset += result;
                }
                if (remaining == 0)
                {
                    return;
                }
            }
            PositionalIo.Write(handle, new ReadOnlySpan<byte>(pointer, (int)remaining), offset, path);
            DataSync(handle, path);
        }
    }

    /// <summary>
    /// The group commit's write: every byte of <paramref name="frames"/> appended with <c>write(2)</c> on an
    /// <c>O_APPEND</c> descriptor (continued after a short write), then one <c>fdatasync</c>. Returns how many
    /// bytes are durable (all of them, or on a write error those written before it, synchronised) and the errno
    /// that stopped it (0 when none did). When the sync fails, no byte is durable.
    /// </summary>
    internal static long AppendAndSync(SafeFileHandle handle, ReadOnlySpan<byte> frames, out int errno)
    {
        errno = 0;
        long written = 0;
        fixed (byte* start = &MemoryMarshal.GetReference(frames))
        {
            while (written < frames.Length)
            {
                nuint count = (nuint)(frames.Length - written);
                nint result = SyscallSeam.Faults is { } faults ? SyscallSeam.Write(faults, handle, start + written, count, -1) : Libc.Write(handle, start + written, count);
                if (result < 0)
                {
                    int error = Errno.Last;
                    if (error == Errno.EINTR)
                    {
                        continue;
                    }
                    errno = error;
                    break;
                }
                written += result;
            }
        }
        if (written == 0)
        {
            return 0;
        }
        int syncError = DataSyncErrno(handle);
        if (syncError != 0)
        {
            errno = syncError;
            return 0;
        }
        return written;
    }
}
