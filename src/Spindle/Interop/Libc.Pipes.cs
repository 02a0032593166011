using System.Runtime.InteropServices;

namespace Spindle.Interop;

internal static unsafe partial class Libc
{
    internal const short POLLHUP = 0x10;
    internal const uint SPLICE_F_NONBLOCK = 0x2;

    /// <summary><c>pipe2</c>: <paramref name="fds"/>[0] the read end, [1] the write end.</summary>
    [LibraryImport(Lib, EntryPoint = "pipe2", SetLastError = true)]
    internal static partial int Pipe2(int* fds, int flags);

    /// <summary><c>tee</c>: copies bytes from one pipe to another without taking them from the first.</summary>
    [LibraryImport(Lib, EntryPoint = "tee", SetLastError = true)]
    internal static partial nint Tee(int fdIn, int fdOut, nuint length, uint flags);
}
