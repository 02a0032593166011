using Microsoft.Win32.SafeHandles;
using Spindle.Interop;

namespace Spindle.Handles;

/// <summary>
/// Opens a file with <c>open(2)</c> and applies every rule System.IO applies on Linux, in its order:
/// flags from the mode, access and options; the directory check; the <c>flock</c> that emulates
/// <see cref="FileShare"/>; access hints; truncation only once the lock is held; preallocation.
/// </summary>
internal static class FileOpener
{
    private const UnixFileMode DefaultCreateMode =
        UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.GroupRead | UnixFileMode.GroupWrite |
        UnixFileMode.OtherRead | UnixFileMode.OtherWrite;

    internal static SafeFileHandle Open(string path, FileMode mode, FileAccess access, FileShare share, FileOptions options,
        long preallocationSize, UnixFileMode? unixCreateMode, int spindleFlags)
    {
        OpenValidation.ValidateArguments(path, mode, access, share, options, preallocationSize);
        string fullPath = Path.GetFullPath(path);

        int flags = ToOpenFlags(mode, access, share, options) | spindleFlags;
        int permissions = (int)(unixCreateMode ?? DefaultCreateMode);
        var direct = Direct.DirectOpen.Begin(fullPath, ref flags); // O_DIRECT: note what a refusal must undo

        int fd;
        do
        {
            fd = Libc.Open(fullPath, flags, permissions);
        }
        while (fd < 0 && Errno.Last == Errno.EINTR);
        fd = direct.Complete(fd, fullPath, ref flags, permissions); // O_DIRECT refused: clear exception or buffered fallback

        if (fd < 0)
        {
            throw OpenFailure(Errno.Last, fullPath, flags);
        }

        var handle = new SafeFileHandle(fd, ownsHandle: true);
        try
        {
            Direct.DirectOpen.Opened(handle, flags); // a direct handle gets its alignment checked on every call
            Initialize(handle, fd, fullPath, mode, access, share, options, preallocationSize);
        }
        catch
        {
            handle.Dispose();
            throw;
        }
        return handle;
    }

    private static int ToOpenFlags(FileMode mode, FileAccess access, FileShare share, FileOptions options)
    {
        // Create and Truncate do not use O_TRUNC: the file is truncated only after the lock is taken.
        int flags = mode switch
        {
            FileMode.CreateNew => OpenFlags.O_CREAT | OpenFlags.O_EXCL,
            FileMode.Create or FileMode.OpenOrCreate or FileMode.Append => OpenFlags.O_CREAT,
            _ => 0,
        };

        flags |= access switch
        {
            FileAccess.Read => OpenFlags.O_RDONLY,
            FileAccess.Write => OpenFlags.O_WRONLY,
            _ => OpenFlags.O_RDWR,
        };

        if ((share & FileShare.Inheritable) == 0)
        {
            flags |= OpenFlags.O_CLOEXEC;
        }
        if ((options & FileOptions.WriteThrough) != 0)
        {
            flags |= OpenFlags.O_SYNC;
        }
        return flags;
    }

    private static Exception OpenFailure(int errno, string fullPath, int flags)
    {
        // Opening a directory for writing fails with EISDIR; System.IO reports it as access denied.
        if (errno == Errno.EISDIR)
        {
            errno = Errno.EACCES;
        }
        // A path through something that is not a directory is a missing directory to System.IO.
        if (errno == Errno.ENOTDIR)
        {
            return IoErrors.ForErrno(Errno.ENOENT, fullPath, isDirectoryError: true);
        }
        // A missing path is blamed on the directory when creating, or when the parent is missing too.
        bool isDirectoryError = errno == Errno.ENOENT &&
            ((flags & OpenFlags.O_CREAT) != 0 || !Directory.Exists(Path.GetDirectoryName(Path.TrimEndingDirectorySeparator(fullPath))));
        return IoErrors.ForErrno(errno, fullPath, isDirectoryError);
    }

    private static unsafe void Initialize(SafeFileHandle handle, int fd, string path, FileMode mode, FileAccess access,
        FileShare share, FileOptions options, long preallocationSize)
    {
        // Without write access open(2) accepts a directory; reject it from the descriptor to avoid races.
        if ((access & FileAccess.Write) == 0)
        {
            StatxBuffer status;
            if (Libc.Statx(fd, string.Empty, LinuxConstants.AT_EMPTY_PATH, LinuxConstants.STATX_TYPE, &status) != 0)
            {
                throw IoErrors.ForErrno(Errno.Last, path);
            }
            if ((status.Mode & LinuxConstants.S_IFMT) == LinuxConstants.S_IFDIR)
            {
                throw IoErrors.ForErrno(Errno.EACCES, path);
            }
        }

        bool isLocked = FileLocking.TryLock(handle, fd, path, access, share);
        bool deleteOnClose = (options & FileOptions.DeleteOnClose) != 0;
        SafeFileHandleInternals.Initialize(handle, path, (options & FileOptions.Asynchronous) != 0, deleteOnClose: false, isLocked);

        // Access hints; RandomAccess wins when both are given, as in System.IO.
        int advice = (options & FileOptions.RandomAccess) != 0 ? LinuxConstants.POSIX_FADV_RANDOM
            : (options & FileOptions.SequentialScan) != 0 ? LinuxConstants.POSIX_FADV_SEQUENTIAL
            : 0;
        if (advice != 0)
        {
            int error = Libc.PosixFAdvise(fd, 0, 0, advice);
            if (error != 0 && error != Errno.EOPNOTSUPP && error != Errno.ESPIPE)
            {
                throw IoErrors.ForErrno(error, path);
            }
        }

        if (mode is FileMode.Create or FileMode.Truncate && Libc.FTruncate(fd, 0) < 0)
        {
            // EBADF/EINVAL mean the target cannot be truncated (a pipe, a character device): not an error.
            int errno = Errno.Last;
            if (errno != Errno.EBADF && errno != Errno.EINVAL)
            {
                throw IoErrors.ForErrno(errno, path);
            }
        }

        if (preallocationSize > 0 && Libc.FAllocate(fd, LinuxConstants.FALLOC_FL_KEEP_SIZE, 0, preallocationSize) < 0)
        {
            // Preallocation is a hint: only "no space" and "too large" fail the open, and the file is removed.
            int errno = Errno.Last;
            if (errno is Errno.EFBIG or Errno.ENOSPC)
            {
                handle.Dispose();
                Libc.Unlink(path);
                throw new IOException(errno == Errno.EFBIG
                    ? $"Failed to create '{path}' with allocation size '{preallocationSize}' because the file was too large."
                    : $"Failed to create '{path}' with allocation size '{preallocationSize}' because the disk was full.", errno);
            }
        }

        // Set last, so that a failed open never deletes a file it did not create.
        if (deleteOnClose)
        {
            SafeFileHandleInternals.Initialize(handle, path, (options & FileOptions.Asynchronous) != 0, deleteOnClose: true, isLocked);
        }
    }
}
