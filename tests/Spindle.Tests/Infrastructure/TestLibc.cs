using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;

namespace Spindle.Tests.Infrastructure;

/// <summary>The few libc calls tests need to look at descriptors and build special files.</summary>
public static unsafe partial class TestLibc
{
    public const int F_GETFD = 1;
    public const int F_GETFL = 3;
    public const int FD_CLOEXEC = 1;
    public const int O_ACCMODE = 0x3;
    public const int O_NONBLOCK = 0x800;
    public const int O_APPEND = 0x400;
    public const int O_SYNC = 0x101000;
    public const int AF_UNIX = 1;
    public const int SOCK_STREAM = 1;

    [LibraryImport("libc", EntryPoint = "fcntl", SetLastError = true)]
    public static partial int Fcntl(int fd, int command, int argument);

    public const int POSIX_FADV_DONTNEED = 4;

    /// <summary>posix_fadvise(2): returns the error number instead of setting errno.</summary>
    [LibraryImport("libc", EntryPoint = "posix_fadvise")]
    public static partial int PosixFAdvise(int fd, long offset, long length, int advice);

    [LibraryImport("libc", EntryPoint = "umask")]
    public static partial int Umask(int mask);

    [LibraryImport("libc", EntryPoint = "mkfifo", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    public static partial int MkFifo(string path, int mode);

    [LibraryImport("libc", EntryPoint = "socketpair", SetLastError = true)]
    public static partial int SocketPair(int domain, int type, int protocol, int* fds);

    [LibraryImport("libc", EntryPoint = "pipe2", SetLastError = true)]
    public static partial int Pipe2(int* fds, int flags);

    /// <summary>The open(2) status flags of a handle's descriptor.</summary>
    public static int StatusFlags(SafeFileHandle handle) => Fcntl((int)handle.DangerousGetHandle(), F_GETFL, 0);

    /// <summary>Whether the handle's descriptor is closed on exec.</summary>
    public static bool IsCloseOnExec(SafeFileHandle handle) =>
        (Fcntl((int)handle.DangerousGetHandle(), F_GETFD, 0) & FD_CLOEXEC) != 0;

    /// <summary>A connected pair of Unix stream sockets as owned handles.</summary>
    public static (SafeFileHandle, SafeFileHandle) CreateSocketPair()
    {
        int* fds = stackalloc int[2];
        if (SocketPair(AF_UNIX, SOCK_STREAM | 0x80000 /* SOCK_CLOEXEC */, 0, fds) != 0)
        {
            throw new InvalidOperationException($"socketpair failed: errno {Marshal.GetLastPInvokeError()}");
        }
        return (new SafeFileHandle(fds[0], ownsHandle: true), new SafeFileHandle(fds[1], ownsHandle: true));
    }

    /// <summary>An anonymous pipe (read end, write end) as owned handles, optionally non-blocking.</summary>
    public static (SafeFileHandle Read, SafeFileHandle Write) CreatePipe(bool nonBlocking = false)
    {
        int* fds = stackalloc int[2];
        if (Pipe2(fds, 0x80000 /* O_CLOEXEC */ | (nonBlocking ? O_NONBLOCK : 0)) != 0)
        {
            throw new InvalidOperationException($"pipe2 failed: errno {Marshal.GetLastPInvokeError()}");
        }
        return (new SafeFileHandle(fds[0], ownsHandle: true), new SafeFileHandle(fds[1], ownsHandle: true));
    }

    public const int S_IFMT = 0xF000;
    public const int S_IFREG = 0x8000;

    [LibraryImport("libc", EntryPoint = "statx", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static partial int Statx(int dirfd, string path, int flags, uint mask, byte* buffer);

    /// <summary>The S_IFMT bits of what a path names (links followed), or -1 if it cannot be examined.</summary>
    public static int FileType(string path)
    {
        byte* status = stackalloc byte[256];
        // AT_FDCWD, STATX_TYPE; stx_mode is at offset 28.
        return Statx(-100, path, 0, 0x1, status) != 0 ? -1 : *(ushort*)(status + 28) & S_IFMT;
    }

    /// <summary>open(2) as is: a descriptor no handle owns (no lock, no check), or -1 and errno.</summary>
    [LibraryImport("libc", EntryPoint = "open", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    public static partial int Open(string path, int flags);

    /// <summary>
    /// Opens and at once closes <paramref name="path"/> with <paramref name="flags"/> (if it opens): to a FIFO, a partner
    /// that comes and goes, which lets an open waiting for one return (a reader then sees the end of the data).
    /// </summary>
    public static void OpenAndClose(string path, int flags)
    {
        int fd = Open(path, flags | 0x80000 /* O_CLOEXEC */);
        if (fd >= 0)
        {
            Close(fd);
        }
    }

    [LibraryImport("libc", EntryPoint = "read", SetLastError = true)]
    public static partial nint Read(int fd, byte* buffer, nuint count);

    [LibraryImport("libc", EntryPoint = "write", SetLastError = true)]
    public static partial nint Write(int fd, byte* buffer, nuint count);

    [LibraryImport("libc", EntryPoint = "close")]
    public static partial int Close(int fd);

    /// <summary>struct pollfd.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct PollFd
    {
        public int Fd;
        public short Events;
        public short Revents;
    }

    public const short POLLIN = 0x1;

    [LibraryImport("libc", EntryPoint = "poll", SetLastError = true)]
    public static partial int Poll(PollFd* fds, nuint count, int timeoutMilliseconds);

    /// <summary>A read-only descriptor of a directory (which System.IO and Spindle refuse to open) as an owned handle.</summary>
    public static SafeFileHandle OpenDirectory(string path) => OpenWithFlags(path, 0);

    /// <summary>open(2) with exactly these flags (and O_CLOEXEC), for handles System.IO cannot open (O_PATH, read-only O_APPEND).</summary>
    public static SafeFileHandle OpenWithFlags(string path, int flags)
    {
        int fd = Open(path, flags | 0x80000 /* O_CLOEXEC */);
        if (fd < 0)
        {
            throw new InvalidOperationException($"open failed: errno {Marshal.GetLastPInvokeError()}");
        }
        return new SafeFileHandle(fd, ownsHandle: true);
    }

    [LibraryImport("libc", EntryPoint = "gettid")]
    public static partial int GetTid();

    /// <summary>
    /// Waits until the thread <paramref name="tid"/> of this process sleeps in open(2) of a FIFO for its other end (its
    /// wait channel is <c>wait_for_partner</c>), so that a test can let the other end come only then.
    /// </summary>
    public static void WaitUntilWaitingForFifoPartner(Func<int> tid, TimeSpan timeout)
    {
        DateTime deadline = DateTime.UtcNow + timeout;
        while (DateTime.UtcNow < deadline)
        {
            int id = tid();
            try
            {
                if (id != 0 && System.IO.File.ReadAllText($"/proc/self/task/{id}/wchan").Contains("wait_for_partner", StringComparison.Ordinal))
                {
                    return;
                }
            }
            catch (IOException)
            {
            }
            Thread.Sleep(1);
        }
        throw new TimeoutException("the thread never waited in open(2) of a FIFO");
    }

    /// <summary>Creates a named pipe.</summary>
    public static void CreateFifo(string path)
    {
        if (MkFifo(path, 0x1B6) != 0)
        {
            throw new InvalidOperationException($"mkfifo failed: errno {Marshal.GetLastPInvokeError()}");
        }
    }
}
