using Microsoft.Win32.SafeHandles;
using Spindle.Handles;
using Spindle.Interop;
using Spindle.Syscalls;

namespace Spindle.Copy;

/// <summary>
/// <see cref="File.Copy(string, string, bool)"/>'s steps on Linux, in its order and with its exceptions:
/// open the source (shared lock), open the destination (create or create-new, exclusive lock, the
/// source's permissions), copy the data, copy the times, set the permissions (last, so that a copy that
/// fails leaves an overwritten destination its own mode). The data moves with <see cref="ExtentCopier"/>,
/// or with read/write when either side is not a regular file (a pipe, a FIFO, a device), as in System.IO.
/// </summary>
internal static unsafe class FileCopier
{
    private const int PermissionBits = 0x1FF; // rwxrwxrwx: set-id and sticky bits are not copied, as in System.IO
    private const uint StatxBasic = LinuxConstants.STATX_TYPE | LinuxConstants.STATX_MODE | LinuxConstants.STATX_SIZE | 0x20 /* ATIME */
        | 0x40 /* MTIME */ | 0x100 /* INO */ | 0x400 /* BLOCKS */;

    internal static void Copy(string source, string destination, bool overwrite, IProgress<long>? progress, CancellationToken cancellationToken)
    {
        using SafeFileHandle input = FileOpener.Open(source, FileMode.Open, FileAccess.Read, FileShare.Read, FileOptions.None,
            preallocationSize: 0, unixCreateMode: null, spindleFlags: 0);
        StatxBuffer status = Status(input, source);

        if (overwrite && !SafeFileHandleInternals.IsLocked(input))
        {
            // System.IO relies on the lock to refuse copying a file onto itself; without one (locking off with
            // DOTNET_SYSTEM_IO_DISABLEFILELOCKING, or NFS and SMB, where none is taken) it would truncate the source.
            // Checked first, with the same exception the lock gives.
            RejectSameFile(status, destination);
        }

        SafeFileHandle output = OpenDestination(destination, overwrite, (UnixFileMode)(status.Mode & PermissionBits));
        bool completed = false;
        bool regularOutput = false;
        try
        {
            bool regularInput = (status.Mode & LinuxConstants.S_IFMT) == LinuxConstants.S_IFREG;
            // A clone succeeds only between regular files of one file system; the destination was just emptied.
            bool cloned = regularInput && status.Size > 0 && ExtentCopier.TryClone(input, output);
            regularOutput = cloned || (Status(output, destination).Mode & LinuxConstants.S_IFMT) == LinuxConstants.S_IFREG;
            if (cloned)
            {
                progress?.Report((long)status.Size);
            }
            else if (regularOutput && regularInput)
            {
                ExtentCopier.Copy(input, output, (long)status.Size, source, destination, progress, cancellationToken);
            }
            else
            {
                ExtentCopier.CopySequential(input, output, source, destination, progress, cancellationToken);
            }
            CopyTimes(output, status);
            // The create mode was filtered by the umask, and an overwritten file kept its own: set the source's.
            int result;
            while ((result = Libc.FChmod(output, status.Mode & PermissionBits)) < 0 && Errno.Last == Errno.EINTR)
            {
            }
            if (result < 0 && Errno.Last != Errno.EPERM)
            {
                throw IoErrors.ForErrno(Errno.Last, destination);
            }
            completed = true;
        }
        finally
        {
            output.Dispose();
            if (!completed && regularOutput && cancellationToken.IsCancellationRequested)
            {
                // A cancelled copy leaves no half-written file behind (a FIFO or device it wrote to stays).
                Libc.Unlink(destination);
            }
        }
    }

    private static SafeFileHandle OpenDestination(string destination, bool overwrite, UnixFileMode mode)
    {
        try
        {
            return FileOpener.Open(destination, overwrite ? FileMode.Create : FileMode.CreateNew, FileAccess.ReadWrite, FileShare.None,
                FileOptions.None, preallocationSize: 0, mode, spindleFlags: 0);
        }
        catch (IOException e) when (e.HResult == Errno.EEXIST && Directory.Exists(destination))
        {
            throw new IOException($"The target file '{destination}' is a directory, not a file.", Errno.EISDIR);
        }
    }

    private static void RejectSameFile(in StatxBuffer source, string destination)
    {
        StatxBuffer target;
        if (Libc.Statx(LinuxConstants.AT_FDCWD, destination, 0, StatxBasic, &target) == 0 &&
            target.Inode == source.Inode && target.DeviceMajor == source.DeviceMajor && target.DeviceMinor == source.DeviceMinor)
        {
            throw IoErrors.ForErrno(Errno.EWOULDBLOCK, destination);
        }
    }

    private static StatxBuffer Status(SafeFileHandle handle, string path)
    {
        StatxBuffer status;
        if (Libc.Statx(handle, string.Empty, LinuxConstants.AT_EMPTY_PATH, StatxBasic, &status) != 0)
        {
            throw IoErrors.ForErrno(Errno.Last, path);
        }
        return status;
    }

    private static void CopyTimes(SafeFileHandle output, in StatxBuffer status)
    {
        // Best effort, as in System.IO: a file system that cannot keep the times still gets the data.
        TimeSpec* times = stackalloc TimeSpec[2];
        times[0] = new TimeSpec { Seconds = status.AccessTimeSeconds, Nanoseconds = status.AccessTimeNanoseconds };
        times[1] = new TimeSpec { Seconds = status.ModifyTimeSeconds, Nanoseconds = status.ModifyTimeNanoseconds };
        Libc.FutimeNs(output, times);
    }
}
