using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace Spindle.Interop;

internal static unsafe partial class Libc
{
    // The fstat system call itself, the call System.IO makes: glibc 2.33+ implements fstat() as
    // newfstatat(fd, "", AT_EMPTY_PATH), which the kernel serves more slowly (it looks up the empty path).
    private static readonly long s_fstatNumber = RuntimeInformation.ProcessArchitecture == Architecture.X64 ? 5 : 80; // arm64: 80

    // st_mode in the kernel's struct stat: x86-64 puts st_nlink (8 bytes) before it, arm64 after it.
    private static readonly int s_statModeOffset = RuntimeInformation.ProcessArchitecture == Architecture.X64 ? 24 : 16;

    /// <summary>
    /// The file's length from one <c>fstat</c> system call; 0 on success, else -1 with errno set.
    /// Only where <see cref="FStatLayoutKnown"/>.
    /// </summary>
    internal static int FStatSize(SafeHandle fd, out long size) => FStat(fd, out size, out _, out _);

    /// <summary>As <see cref="FStatSize"/>, also giving <c>st_mode</c> (file type and permission bits) and <c>st_dev</c> (the device of the file's file system).</summary>
    [SkipLocalsInit] // the kernel fills the stat buffer; zeroing it first is wasted
    internal static unsafe int FStat(SafeHandle fd, out long size, out int mode, out ulong device)
    {
        byte* status = stackalloc byte[StatSize];
        if (Syscall(s_fstatNumber, fd, (long)status, 0, 0, 0, 0) != 0)
        {
            size = 0;
            mode = 0;
            device = 0;
            return -1;
        }
        device = *(ulong*)status; // st_dev comes first on x86-64 and arm64
        size = *(long*)(status + StatSizeOffset);
        mode = (int)*(uint*)(status + s_statModeOffset);
        return 0;
    }
}
