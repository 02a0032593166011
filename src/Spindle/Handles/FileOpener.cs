using Microsoft.Win32.SafeHandles;
using Spindle.Interop;
using Spindle.Syscalls;

namespace Spindle.Handles;

/// <summary>
/// Opens a file with <c>open(2)</c> and applies every rule System.IO applies on Linux, in its order:
/// flags from the mode, access and options; the directory check; the <c>flock</c> that emulates
/// <see cref="FileShare"/>; access hints; truncation only once the lock is held; preallocation.
/// The steps before and after <c>open(2)</c> (<see cref="Prepare"/>, <see cref="Finish"/>) are shared with the
/// asynchronous open (Engines/IoUring/RingOpen.cs, Engines/ThreadPool/PoolOpen.cs), which only makes the <c>open(2)</c> and the <c>close(2)</c> elsewhere.
/// </summary>
internal static partial class FileOpener
{
    private const UnixFileMode DefaultCreateMode =
        UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.GroupRead | UnixFileMode.GroupWrite |
        UnixFileMode.OtherRead | UnixFileMode.OtherWrite;

    internal static SafeFileHandle Open(string path, FileMode mode, FileAccess access, FileShare share, FileOptions options,
        long preallocationSize, UnixFileMode? unixCreateMode, int spindleFlags)
        => Open(path, mode, access, share, options, preallocationSize, unixCreateMode, spindleFlags, out _);

    /// <summary>As the other overload; <paramref name="opened"/> says what the open learned about the file on the way.</summary>
    internal static SafeFileHandle Open(string path, FileMode mode, FileAccess access, FileShare share, FileOptions options,
        long preallocationSize, UnixFileMode? unixCreateMode, int spindleFlags, out OpenedFile opened)
    {
        OpenRequest request = Prepare(path, mode, access, share, options, preallocationSize, unixCreateMode, spindleFlags);
        return Open(ref request, out opened);
    }

    /// <summary>
    /// Everything before <c>open(2)</c>, shared by the synchronous and the asynchronous open: System.IO's argument
    /// validation, the full path, the flags and the permissions of a created file.
    /// </summary>
    internal static OpenRequest Prepare(string path, FileMode mode, FileAccess access, FileShare share, FileOptions options,
        long preallocationSize, UnixFileMode? unixCreateMode, int spindleFlags)
    {
        OpenValidation.ValidateArguments(path, mode, access, share, options, preallocationSize);
        string fullPath = Path.GetFullPath(path);
        int flags = ToOpenFlags(mode, access, share, options) | spindleFlags;
        var direct = Direct.DirectOpen.Begin(fullPath, ref flags); // O_DIRECT: note what a refusal must undo
        return new OpenRequest(fullPath, mode, access, share, options, preallocationSize, flags, (int)(unixCreateMode ?? DefaultCreateMode), direct);
    }

    /// <summary>The synchronous open of a prepared request: <c>open(2)</c> on the caller's thread, then <see cref="Finish"/>.</summary>
    internal static SafeFileHandle Open(ref OpenRequest request, out OpenedFile opened)
    {
        int fd = Opened(ref request, Libc.OpenRetryingInterrupts(request.FullPath, request.Flags, request.Permissions));
        while (true)
        {
            var handle = new SafeFileHandle(fd, ownsHandle: true);
            FinishResult result;
            try
            {
                result = Finish(handle, request, out opened, out _);
            }
            catch
            {
                handle.Dispose();
                throw;
            }
            if (result == FinishResult.Opened)
            {
                return handle;
            }
            handle.Dispose();
            if (result != FinishResult.OpenAgain)
            {
                throw request.RemoveAfterPreallocationFailure(result);
            }
            // The path now names another file (a DeleteOnClose lock file was removed or replaced while we
            // waited for its lock): open the path again, as System.IO does.
            fd = Libc.OpenRetryingInterrupts(request.FullPath, request.Flags, request.Permissions);
            if (fd < 0)
            {
                throw OpenFailure(-fd, request.FullPath);
            }
        }
    }

    /// <summary>
    /// Given what <c>open(2)</c> returned (a descriptor, or a negated errno): the descriptor, after the O_DIRECT
    /// refusal rules; or System.IO's exception for the errno.
    /// </summary>
    internal static int Opened(ref OpenRequest request, int result)
    {
        // O_DIRECT refused: a clear exception, or a buffered open when the caller allowed the fallback.
        result = request.Direct.Complete(result, request.FullPath, ref request.Flags, request.Permissions);
        return result >= 0 ? result : throw OpenFailure(-result, request.FullPath);
    }

    private static int ToOpenFlags(FileMode mode, FileAccess access, FileShare share, FileOptions options)
    {
        // Create and Truncate use O_TRUNC only when locking is off; otherwise the file is truncated only
        // after the lock is taken.
        int truncate = FileLocking.IsDisabled ? OpenFlags.O_TRUNC : 0;
        int flags = mode switch
        {
            FileMode.CreateNew => OpenFlags.O_CREAT | OpenFlags.O_EXCL,
            FileMode.Create => OpenFlags.O_CREAT | truncate,
            FileMode.Truncate => truncate,
            FileMode.OpenOrCreate or FileMode.Append => OpenFlags.O_CREAT,
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

    /// <summary>System.IO's exception for an <c>open(2)</c> that failed with <paramref name="errno"/>: the one mapping of every open, synchronous or not.</summary>
    internal static Exception OpenFailure(int errno, string fullPath)
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
        // A missing path is blamed on the directory only when the directory is missing too, creating or not: a
        // directory that exists but refuses creation (/proc/self) gives ENOENT, and System.IO says FileNotFound.
        bool isDirectoryError = errno == Errno.ENOENT &&
            !Directory.Exists(Path.GetDirectoryName(Path.TrimEndingDirectorySeparator(fullPath)));
        return IoErrors.ForErrno(errno, fullPath, isDirectoryError);
    }

    /// <summary>
    /// Everything after <c>open(2)</c>, shared by the synchronous and the asynchronous open, in System.IO's order: the
    /// directory check, the lock, access hints, truncation once the lock is held, preallocation, DeleteOnClose. It
    /// never closes <paramref name="handle"/>: on an exception, and on any result but <see cref="FinishResult.Opened"/>,
    /// the caller closes it (its own way) and then does what the result says.
    /// </summary>
    /// <param name="handle">The handle of the descriptor open(2) returned.</param>
    /// <param name="request">The open.</param>
    /// <param name="opened">What the steps learned about the file.</param>
    /// <param name="length">A regular file's length from the directory check's <c>fstat</c>, else -1.</param>
    internal static unsafe FinishResult Finish(SafeFileHandle handle, in OpenRequest request, out OpenedFile opened, out long length)
    {
        length = -1;
        string path = request.FullPath;
        FileMode mode = request.Mode;
        FileAccess access = request.Access;
        FileShare share = request.Share;
        FileOptions options = request.Options;
        long preallocationSize = request.PreallocationSize;
        Direct.DirectOpen.Opened(handle, request.Flags); // a direct handle gets its alignment checked on every call
        opened = OpenedFile.FromFlags(request.Flags);
        // Without write access open(2) accepts a directory; reject it from the descriptor to avoid races.
        if ((access & FileAccess.Write) == 0)
        {
            int fileType = FileType(handle, path, out long size, out ulong device);
            opened = opened.WithFileType(fileType);
            if (request.MayNotHaveWaited && fileType is LinuxConstants.S_IFIFO or LinuxConstants.S_IFCHR)
            {
                return FinishResult.OpenBlocking;
            }
            if (fileType == LinuxConstants.S_IFDIR)
            {
                throw IoErrors.ForErrno(Errno.EACCES, path);
            }
            if (fileType == LinuxConstants.S_IFREG)
            {
                // Known seekable now: spares the lseek probe System.IO's own open spares too.
                SafeFileHandleInternals.MarkSeekable(handle);
                length = size;
                if (device != 0)
                {
                    // Its file system: where its reads run and where its close may wait, known now for a dictionary lookup.
                    opened = opened.WithFileSystem(LocalFileSystems.KindOf(device, handle));
                }
            }
        }

        bool isLocked = FileLocking.TryLock(handle, path, access, share, out long fileSystemType);
        if (fileSystemType != 0)
        {
            opened = opened.WithFileSystem(LocalFileSystems.KindOfType(fileSystemType, handle, readable: (access & FileAccess.Read) != 0));
        }
        bool deleteOnClose = (options & FileOptions.DeleteOnClose) != 0;
        // A handle of one content call is closed by Spindle and never shared, so its close releases the lock;
        // System.IO unlocks first only because a close it does not retry might leave the lock held.
        SafeFileHandleInternals.Initialize(handle, path, (options & FileOptions.Asynchronous) != 0, deleteOnClose: false, isLocked && !request.ForOneCall);

        // The lock-file pattern (OpenOrCreate, FileShare.None, DeleteOnClose): the previous owner deletes the
        // file while still holding the lock, so once we hold it the path may name another file, or none.
        if (isLocked && deleteOnClose && share == FileShare.None && mode == FileMode.OpenOrCreate && !StillAtPath(handle, path))
        {
            return FinishResult.OpenAgain;
        }

        // Access hints; RandomAccess wins when both are given, as in System.IO. Only a hint: errors are ignored.
        int advice = (options & FileOptions.RandomAccess) != 0 ? LinuxConstants.POSIX_FADV_RANDOM
            : (options & FileOptions.SequentialScan) != 0 ? LinuxConstants.POSIX_FADV_SEQUENTIAL
            : 0;
        if (advice != 0)
        {
            _ = Libc.PosixFAdvise(handle, 0, 0, advice);
        }

        if (mode is FileMode.Create or FileMode.Truncate && !FileLocking.IsDisabled)
        {
            if (Libc.FTruncate(handle, 0) == 0)
            {
                // ftruncate(2) accepts nothing but regular files (EINVAL otherwise), which are seekable: no lseek probe later.
                opened = opened.WithFileType(LinuxConstants.S_IFREG);
                SafeFileHandleInternals.MarkSeekable(handle);
            }
            else
            {
                // EBADF/EINVAL mean the target cannot be truncated (a pipe, a character device): not an error.
                int errno = Errno.Last;
                if (errno != Errno.EBADF && errno != Errno.EINVAL)
                {
                    throw IoErrors.ForErrno(errno, path);
                }
            }
        }

        if (preallocationSize > 0 && Libc.FAllocate(handle, LinuxConstants.FALLOC_FL_KEEP_SIZE, 0, preallocationSize) < 0)
        {
            // Preallocation is a hint: only "no space" and "too large" fail the open, and the file is removed.
            int errno = Errno.Last;
            if (errno is Errno.EFBIG or Errno.ENOSPC)
            {
                // The caller closes the file, removes it and throws PreallocationFailure.
                return errno == Errno.EFBIG ? FinishResult.TooLarge : FinishResult.NoSpace;
            }
        }

        // Set last, so that a failed open never deletes a file it did not create.
        if (deleteOnClose)
        {
            SafeFileHandleInternals.Initialize(handle, path, (options & FileOptions.Asynchronous) != 0, deleteOnClose: true, isLocked);
        }
        return FinishResult.Opened;
    }

    /// <summary>The S_IFMT bits of the open file; the fstat system call where its layout is known, as FileStream makes it.</summary>
    private static unsafe int FileType(SafeFileHandle handle, string path, out long size, out ulong device)
    {
        size = -1;
        device = 0;
        if (Libc.FStatLayoutKnown)
        {
            if (Libc.FStat(handle, out size, out int mode, out device) != 0)
            {
                throw IoErrors.ForErrno(Errno.Last, path);
            }
            return mode & LinuxConstants.S_IFMT;
        }
        StatxBuffer status;
        if (Libc.Statx(handle, string.Empty, LinuxConstants.AT_EMPTY_PATH, LinuxConstants.STATX_TYPE, &status) != 0)
        {
            throw IoErrors.ForErrno(Errno.Last, path);
        }
        return status.Mode & LinuxConstants.S_IFMT;
    }

    /// <summary>Whether <paramref name="path"/> still names the file open as <paramref name="handle"/>; throws for errors other than a missing path.</summary>
    private static unsafe bool StillAtPath(SafeFileHandle handle, string path)
    {
        const uint Identity = LinuxConstants.STATX_TYPE | 0x100; // STATX_INO; the device is always filled
        StatxBuffer opened, named;
        if (Libc.Statx(handle, string.Empty, LinuxConstants.AT_EMPTY_PATH, Identity, &opened) != 0)
        {
            throw IoErrors.ForErrno(Errno.Last, path);
        }
        if (Libc.Statx(LinuxConstants.AT_FDCWD, path, 0, Identity, &named) != 0)
        {
            int errno = Errno.Last;
            return errno == Errno.ENOENT ? false : throw IoErrors.ForErrno(errno, path);
        }
        return opened.Inode == named.Inode && opened.DeviceMajor == named.DeviceMajor && opened.DeviceMinor == named.DeviceMinor;
    }
}
