using System.Runtime.InteropServices;

namespace Spindle.Interop;

/// <summary>
/// The libc entry points Spindle calls. Every function sets errno on failure; callers read it with
/// <see cref="Marshal.GetLastPInvokeError"/> right after the call.
/// </summary>
/// <remarks>
/// A descriptor that a <see cref="SafeHandle"/> owns is passed as that handle, as dotnet/runtime's <c>Interop.Sys</c>
/// does: the marshaller takes a reference before the call and releases it after, so a concurrent <c>Dispose</c> cannot
/// close the descriptor (and let the kernel hand its number to another open) while the call runs, and no call site
/// can forget it. The handle travels as a pointer-sized value where C declares an <c>int</c>; on the 64-bit Linux
/// ABIs the callee reads the low 32 bits of that register. The <c>int</c> forms are for descriptors no handle owns:
/// an eventfd, a descriptor an open has not wrapped yet, one a release is closing. A reference that must outlive the
/// call (the kernel still uses the descriptor afterwards) is a <c>Syscalls.HandleLease</c>.
/// </remarks>
internal static unsafe partial class Libc
{
    private const string Lib = "libc";

    [LibraryImport(Lib, EntryPoint = "gettid")]
    internal static partial int GetTid();

    [LibraryImport(Lib, EntryPoint = "open", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    internal static partial int Open(string path, int flags, int mode);

    [LibraryImport(Lib, EntryPoint = "close", SetLastError = true)]
    internal static partial int Close(int fd);

    [LibraryImport(Lib, EntryPoint = "pread", SetLastError = true)]
    internal static partial nint PRead(SafeHandle fd, byte* buffer, nuint count, long offset);

    [LibraryImport(Lib, EntryPoint = "pwrite", SetLastError = true)]
    internal static partial nint PWrite(SafeHandle fd, byte* buffer, nuint count, long offset);

    [LibraryImport(Lib, EntryPoint = "read", SetLastError = true)]
    internal static partial nint Read(SafeHandle fd, byte* buffer, nuint count);

    [LibraryImport(Lib, EntryPoint = "write", SetLastError = true)]
    internal static partial nint Write(SafeHandle fd, byte* buffer, nuint count);

    // An eventfd of our own, which no handle owns.
    [LibraryImport(Lib, EntryPoint = "read", SetLastError = true)]
    internal static partial nint Read(int fd, byte* buffer, nuint count);

    [LibraryImport(Lib, EntryPoint = "write", SetLastError = true)]
    internal static partial nint Write(int fd, byte* buffer, nuint count);

    [LibraryImport(Lib, EntryPoint = "preadv", SetLastError = true)]
    internal static partial nint PReadV(SafeHandle fd, IoVector* vectors, int count, long offset);

    [LibraryImport(Lib, EntryPoint = "pwritev", SetLastError = true)]
    internal static partial nint PWriteV(SafeHandle fd, IoVector* vectors, int count, long offset);

    [LibraryImport(Lib, EntryPoint = "readv", SetLastError = true)]
    internal static partial nint ReadV(SafeHandle fd, IoVector* vectors, int count);

    [LibraryImport(Lib, EntryPoint = "writev", SetLastError = true)]
    internal static partial nint WriteV(SafeHandle fd, IoVector* vectors, int count);

    [LibraryImport(Lib, EntryPoint = "preadv2", SetLastError = true)]
    internal static partial nint PReadV2(SafeHandle fd, IoVector* vectors, int count, long offset, int flags);

    // A descriptor a HandleLease keeps open for the whole call (a ring request its waiter runs itself).
    [LibraryImport(Lib, EntryPoint = "preadv2", SetLastError = true)]
    internal static partial nint PReadV2(int fd, IoVector* vectors, int count, long offset, int flags);

    [LibraryImport(Lib, EntryPoint = "pwritev2", SetLastError = true)]
    internal static partial nint PWriteV2(int fd, IoVector* vectors, int count, long offset, int flags);

    /// <summary><c>preadv2</c> into one buffer (the flags, such as <c>RWF_NOWAIT</c>, exist only in the vector form).</summary>
    internal static nint PReadV2(SafeHandle fd, byte* buffer, nuint count, long offset, int flags)
    {
        IoVector vector = new() { Base = buffer, Count = count };
        return PReadV2(fd, &vector, 1, offset, flags);
    }

    [LibraryImport(Lib, EntryPoint = "lseek", SetLastError = true)]
    internal static partial long LSeek(SafeHandle fd, long offset, int whence);

    [LibraryImport(Lib, EntryPoint = "ftruncate", SetLastError = true)]
    internal static partial int FTruncate(SafeHandle fd, long length);

    [LibraryImport(Lib, EntryPoint = "fsync", SetLastError = true)]
    internal static partial int FSync(SafeHandle fd);

    [LibraryImport(Lib, EntryPoint = "fdatasync", SetLastError = true)]
    internal static partial int FDataSync(SafeHandle fd);

    [LibraryImport(Lib, EntryPoint = "flock", SetLastError = true)]
    internal static partial int FLock(SafeHandle fd, int operation);

    // A release unlocks the descriptor it is about to close: its handle takes no references any more.
    [LibraryImport(Lib, EntryPoint = "flock", SetLastError = true)]
    internal static partial int FLock(int fd, int operation);

    [LibraryImport(Lib, EntryPoint = "fallocate", SetLastError = true)]
    internal static partial int FAllocate(SafeHandle fd, int mode, long offset, long length);

    // posix_fadvise returns the error number instead of setting errno.
    [LibraryImport(Lib, EntryPoint = "posix_fadvise")]
    internal static partial int PosixFAdvise(SafeHandle fd, long offset, long length, int advice);

    [LibraryImport(Lib, EntryPoint = "fcntl", SetLastError = true)]
    internal static partial int Fcntl(SafeHandle fd, int command, int argument);

    // A descriptor an open has not wrapped in a handle yet.
    [LibraryImport(Lib, EntryPoint = "fcntl", SetLastError = true)]
    internal static partial int Fcntl(int fd, int command, int argument);

    [LibraryImport(Lib, EntryPoint = "unlink", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    internal static partial int Unlink(string path);

    // statx of a path (dirfd AT_FDCWD).
    [LibraryImport(Lib, EntryPoint = "statx", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    internal static partial int Statx(int dirfd, string path, int flags, uint mask, StatxBuffer* buffer);

    // statx of an open file (an empty path and AT_EMPTY_PATH).
    [LibraryImport(Lib, EntryPoint = "statx", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    internal static partial int Statx(SafeHandle fd, string path, int flags, uint mask, StatxBuffer* buffer);

    [LibraryImport(Lib, EntryPoint = "fstatfs", SetLastError = true)]
    internal static partial int FStatFs(SafeHandle fd, byte* buffer);

    [LibraryImport(Lib, EntryPoint = "copy_file_range", SetLastError = true)]
    internal static partial nint CopyFileRange(SafeHandle fdIn, long* offIn, SafeHandle fdOut, long* offOut, nuint length, uint flags);

    [LibraryImport(Lib, EntryPoint = "strerror_r")]
    internal static partial byte* StrErrorR(int errnum, byte* buffer, nuint length);

    [LibraryImport(Lib, EntryPoint = "syscall", SetLastError = true)]
    internal static partial long Syscall(long number, long a1, long a2, long a3, long a4, long a5, long a6);

    // syscall(2) whose first argument is a descriptor a handle owns.
    [LibraryImport(Lib, EntryPoint = "syscall", SetLastError = true)]
    internal static partial long Syscall(long number, SafeHandle fd, long a2, long a3, long a4, long a5, long a6);

    [LibraryImport(Lib, EntryPoint = "mmap", SetLastError = true)]
    internal static partial void* MMap(void* address, nuint length, int protection, int flags, int fd, long offset);

    [LibraryImport(Lib, EntryPoint = "munmap", SetLastError = true)]
    internal static partial int MUnmap(void* address, nuint length);

    // fcntl with a struct flock argument (F_SETLK and friends), for byte-range locks.
    [LibraryImport(Lib, EntryPoint = "fcntl", SetLastError = true)]
    internal static partial int FcntlLock(SafeHandle fd, int command, FileRegionLock* region);

    // Beyond System.IO: kernel-side copy and direct I/O.
    [LibraryImport(Lib, EntryPoint = "fchmod", SetLastError = true)]
    internal static partial int FChmod(SafeHandle fd, int mode);

    [LibraryImport(Lib, EntryPoint = "futimens", SetLastError = true)]
    internal static partial int FutimeNs(SafeHandle fd, TimeSpec* times);

    [LibraryImport(Lib, EntryPoint = "ioctl", SetLastError = true)]
    internal static partial int IoctlInt(SafeHandle fd, nuint request, int* argument);

    // ioctl(2) whose argument is a value, not a pointer (FICLONE takes the source descriptor).
    [LibraryImport(Lib, EntryPoint = "ioctl", SetLastError = true)]
    internal static partial int IoctlValue(SafeHandle fd, nuint request, SafeHandle argument);

    // fstat(2), the call FileStream's Length makes: a little cheaper than statx(AT_EMPTY_PATH). The buffer
    // must hold StatSize bytes; st_size is at StatSizeOffset where FStatLayoutKnown (x86-64 and arm64).
    [LibraryImport(Lib, EntryPoint = "fstat", SetLastError = true)]
    internal static partial int FStat(int fd, byte* buffer);

    internal const int StatSize = 256;
    internal const int StatSizeOffset = 48;
    internal static readonly bool FStatLayoutKnown = RuntimeInformation.ProcessArchitecture is Architecture.X64 or Architecture.Arm64;
}

/// <summary><c>struct flock</c> on 64-bit Linux: 32 bytes.</summary>
[StructLayout(LayoutKind.Explicit, Size = 32)]
internal struct FileRegionLock
{
    internal const int F_SETLK = 6; // 64-bit Linux, where it is also F_SETLK64
    internal const short F_RDLCK = 0;
    internal const short F_WRLCK = 1;
    internal const short F_UNLCK = 2;

    [FieldOffset(0)] public short Type;   // F_RDLCK, F_WRLCK or F_UNLCK
    [FieldOffset(2)] public short Whence; // SEEK_SET: Start is absolute
    [FieldOffset(8)] public long Start;   // first byte of the region
    [FieldOffset(16)] public long Length; // 0 means "to the end of the file, however long it gets"
    [FieldOffset(24)] public int Pid;     // filled in by F_GETLK only
}

/// <summary>One <c>struct timespec</c> (64-bit Linux).</summary>
internal struct TimeSpec
{
    public long Seconds;     // whole seconds since the epoch
    public long Nanoseconds; // the fraction, 0..999,999,999
}

/// <summary>One <c>struct iovec</c>.</summary>
internal unsafe struct IoVector
{
    public byte* Base;  // start of the buffer
    public nuint Count; // its length in bytes
}

/// <summary><c>struct statx</c>: 256 bytes, the same layout on every architecture.</summary>
[StructLayout(LayoutKind.Explicit, Size = 256)]
internal struct StatxBuffer
{
    [FieldOffset(0)] public uint Mask;            // which fields the kernel filled
    [FieldOffset(4)] public uint BlockSize;       // preferred I/O block size
    [FieldOffset(28)] public ushort Mode;         // file type and permission bits
    [FieldOffset(40)] public ulong Size;          // length in bytes
    [FieldOffset(152)] public uint DioMemAlign;   // O_DIRECT buffer address alignment, 0 if unsupported
    [FieldOffset(156)] public uint DioOffsetAlign; // O_DIRECT offset and length alignment, 0 if unsupported
    [FieldOffset(32)] public ulong Inode;         // inode number
    [FieldOffset(48)] public ulong Blocks;        // 512-byte blocks allocated
    [FieldOffset(64)] public long AccessTimeSeconds;
    [FieldOffset(72)] public uint AccessTimeNanoseconds;
    [FieldOffset(112)] public long ModifyTimeSeconds;
    [FieldOffset(120)] public uint ModifyTimeNanoseconds;
    [FieldOffset(128)] public uint SpecialMajor;  // the device a block or character special file is
    [FieldOffset(132)] public uint SpecialMinor;
    [FieldOffset(136)] public uint DeviceMajor;   // the device holding the file
    [FieldOffset(140)] public uint DeviceMinor;
}

internal static unsafe partial class Libc
{
    [LibraryImport(Lib, EntryPoint = "eventfd", SetLastError = true)]
    internal static partial int EventFd(uint initialValue, int flags);
}
