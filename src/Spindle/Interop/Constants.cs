using System.Runtime.InteropServices;

namespace Spindle.Interop;

/// <summary>Flags for open(2). The values that differ between architectures are chosen at startup.</summary>
internal static class OpenFlags
{
    internal const int O_RDONLY = 0x0;
    internal const int O_WRONLY = 0x1;
    internal const int O_RDWR = 0x2;
    internal const int O_CREAT = 0x40;
    internal const int O_EXCL = 0x80;
    internal const int O_NOCTTY = 0x100;
    internal const int O_TRUNC = 0x200;
    internal const int O_APPEND = 0x400;
    internal const int O_NONBLOCK = 0x800;
    internal const int O_SYNC = 0x101000;
    internal const int O_CLOEXEC = 0x80000;
    internal const int O_PATH = 0x200000;

    private static readonly bool s_isArm = RuntimeInformation.ProcessArchitecture is Architecture.Arm64 or Architecture.Arm;

    internal static readonly int O_DIRECT = s_isArm ? 0x10000 : 0x4000;
    internal static readonly int O_DIRECTORY = s_isArm ? 0x4000 : 0x10000;
    internal static readonly int O_NOFOLLOW = s_isArm ? 0x8000 : 0x20000;
}

/// <summary>Assorted constants of the Linux ABI.</summary>
internal static class LinuxConstants
{
    internal const int LOCK_SH = 1;
    internal const int LOCK_EX = 2;
    internal const int LOCK_NB = 4;
    internal const int LOCK_UN = 8;

    internal const int SEEK_SET = 0;
    internal const int SEEK_CUR = 1;
    internal const int SEEK_END = 2;

    internal const int FALLOC_FL_KEEP_SIZE = 0x01;

    /// <summary>ioctl FICLONE (_IOW(0x94, 9, int)): the destination shares the source's extents (btrfs, xfs with reflink, bcachefs, NFS 4.2).</summary>
    internal const nuint FICLONE = 0x40049409;

    internal const int POSIX_FADV_NORMAL = 0;
    internal const int POSIX_FADV_RANDOM = 1;
    internal const int POSIX_FADV_SEQUENTIAL = 2;

    internal const int F_GETFD = 1;
    internal const int F_GETFL = 3;
    internal const int F_SETFL = 4;
    internal const int FD_CLOEXEC = 1;

    internal const int AT_FDCWD = -100;
    internal const int AT_EMPTY_PATH = 0x1000;
    internal const uint STATX_TYPE = 0x1;
    internal const uint STATX_MODE = 0x2;
    internal const uint STATX_SIZE = 0x200;
    internal const uint STATX_DIOALIGN = 0x2000;

    internal const int S_IFMT = 0xF000;
    internal const int S_IFREG = 0x8000;
    internal const int S_IFDIR = 0x4000;
    internal const int S_IFBLK = 0x6000;
    internal const int S_IFCHR = 0x2000;
    internal const int S_IFIFO = 0x1000;
    internal const int S_IFSOCK = 0xC000;

    internal const int RWF_NOWAIT = 0x8;

    // The largest iovec count a single readv/writev accepts (UIO_MAXIOV).
    internal const int IOV_MAX = 1024;

    // Linux caps a single read/write at this many bytes (MAX_RW_COUNT).
    internal const int MaxReadWriteCount = 0x7ffff000;
}
