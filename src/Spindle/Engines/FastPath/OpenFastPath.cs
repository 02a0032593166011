using System.Runtime.InteropServices;
using System.Text;
using Spindle.Interop;

namespace Spindle.Engines.FastPath;

/// <summary>
/// An open whose path the kernel's lookup cache holds is made on the caller's thread with <c>openat2(RESOLVE_CACHED)</c>,
/// which fails with EAGAIN rather than read a directory from the disk; only those go to the ring. Like io_uring's first
/// attempt it opens with O_NONBLOCK, so that a FIFO or device does not wait here, then takes it off. Needs Linux 5.12;
/// the kernel refuses opens that create or truncate with RESOLVE_CACHED.
/// </summary>
internal static unsafe class OpenFastPath
{
    private const long OpenAt2 = 437;          // the same number on every architecture (the unified table)
    private const ulong ResolveCached = 0x20;  // RESOLVE_CACHED
    private const int MaxStackPath = 512;

    [StructLayout(LayoutKind.Sequential)]
    private struct OpenHow
    {
        public ulong Flags;
        public ulong Mode;
        public ulong Resolve;
    }

    /// <summary>Whether opens may be tried on the caller's thread: the kernel knows RESOLVE_CACHED and the read fast path is on.</summary>
    internal static readonly bool Enabled = ReadFastPath.Enabled && Probe();

    /// <summary>A descriptor (O_NONBLOCK taken off), a negated errno, or -EAGAIN when the ring must open it (the lookup needs the disk, or the open would wait).</summary>
    internal static int TryOpen(ReadOnlySpan<char> fullPath, int flags)
    {
        int length = Encoding.UTF8.GetByteCount(fullPath);
        if (length >= MaxStackPath)
        {
            return -Errno.EAGAIN; // long paths are rare: the ring copies them
        }
        byte* path = stackalloc byte[length + 1];
        Encoding.UTF8.GetBytes(fullPath, new Span<byte>(path, length));
        path[length] = 0;
        var how = new OpenHow { Flags = (ulong)(uint)(flags | OpenFlags.O_NONBLOCK), Resolve = ResolveCached };
        int fd;
        do
        {
            fd = (int)Libc.Syscall(OpenAt2, LinuxConstants.AT_FDCWD, (long)path, (long)&how, sizeof(OpenHow), 0, 0);
        }
        while (fd < 0 && Errno.Last == Errno.EINTR);
        if (fd < 0)
        {
            return -Errno.Last;
        }
        if ((flags & OpenFlags.O_NONBLOCK) == 0)
        {
            // F_SETFL sets only the status flags (O_APPEND, O_DIRECT, O_NONBLOCK, ...): the request's, without O_NONBLOCK.
            _ = Libc.Fcntl(fd, LinuxConstants.F_SETFL, flags);
        }
        return fd;
    }

    private static bool Probe()
    {
        // The root directory is always in the lookup cache: a kernel that knows RESOLVE_CACHED opens it.
        byte* root = stackalloc byte[] { (byte)'/', 0 };
        var how = new OpenHow { Flags = (ulong)(uint)(OpenFlags.O_PATH | OpenFlags.O_CLOEXEC), Resolve = ResolveCached };
        int fd = (int)Libc.Syscall(OpenAt2, LinuxConstants.AT_FDCWD, (long)root, (long)&how, sizeof(OpenHow), 0, 0);
        if (fd >= 0)
        {
            Libc.Close(fd);
            return true;
        }
        return Errno.Last == Errno.EAGAIN;
    }
}
