using System.Runtime.InteropServices;

namespace Spindle.Interop;

/// <summary>One entry of poll(2)'s array.</summary>
[StructLayout(LayoutKind.Sequential)]
internal struct PollFd
{
    public int Fd;          // the descriptor to watch; negative entries are ignored by the kernel
    public short Events;    // what to wait for (POLLIN, POLLOUT)
    public short Revents;   // what happened, written by the kernel (POLLERR, POLLHUP and POLLNVAL always count)
}

internal static unsafe partial class Libc
{
    internal const short POLLIN = 0x1;
    internal const short POLLOUT = 0x4;

    [LibraryImport(Lib, EntryPoint = "poll", SetLastError = true)]
    internal static partial int Poll(PollFd* fds, nuint count, int timeoutMilliseconds);
}
