using Microsoft.Win32.SafeHandles;
using Spindle.Interop;

namespace Spindle.Handles;

/// <summary>
/// <see cref="FileShare"/> emulated the way System.IO does on Unix: an advisory <c>flock</c>, exclusive
/// for <see cref="FileShare.None"/> and shared otherwise, skipped where it would hurt more than help.
/// </summary>
internal static class FileLocking
{

    // File system magic numbers (statfs f_type) of network file systems, where System.IO does not take shared locks.
    private const long NfsMagic = 0x6969;
    private const long SmbMagic = 0x517B;
    private const long CifsMagic = unchecked((long)0xFF534D42);
    private const long Smb2Magic = unchecked((long)0xFE534D42);

    /// <summary>Whether the process turned locking off, with System.IO's own switch or variable.</summary>
    internal static bool IsDisabled { get; } = SpindleSwitches.DisableFileLocking;

    /// <summary>
    /// Takes the lock <paramref name="share"/> asks for; returns whether a lock is now held.
    /// <paramref name="fileSystemType"/> is statfs's <c>f_type</c> when the decision needed it, else 0.
    /// </summary>
    /// <exception cref="IOException">Another handle holds a conflicting lock (a sharing violation).</exception>
    internal static bool TryLock(SafeFileHandle handle, string path, FileAccess access, FileShare share, out long fileSystemType)
    {
        int operation = share == FileShare.None ? LinuxConstants.LOCK_EX : LinuxConstants.LOCK_SH;
        if (!ShouldLock(handle, operation, access, out fileSystemType))
        {
            return false;
        }
        if (Libc.FLock(handle, operation | LinuxConstants.LOCK_NB) >= 0)
        {
            return true;
        }
        // Only contention matters: other failures (ENOTSUP, ENOLCK) would just hamper an advisory scheme.
        int errno = Errno.Last;
        if (errno == Errno.EWOULDBLOCK)
        {
            throw IoErrors.ForErrno(errno, path);
        }
        return false;
    }

    private static unsafe bool ShouldLock(SafeFileHandle handle, int operation, FileAccess access, out long fileSystemType)
    {
        fileSystemType = 0;
        if (IsDisabled)
        {
            return false;
        }
        if (operation == LinuxConstants.LOCK_EX || (access & FileAccess.Write) == 0)
        {
            return true;
        }
        // A shared lock for writing is skipped on network file systems, whose flock can be emulated with
        // whole-file locks that would exclude other writers.
        byte* statfs = stackalloc byte[256];
        if (Libc.FStatFs(handle, statfs) != 0)
        {
            return false;
        }
        fileSystemType = *(long*)statfs;
        return fileSystemType is not (NfsMagic or SmbMagic or CifsMagic or Smb2Magic);
    }
}
