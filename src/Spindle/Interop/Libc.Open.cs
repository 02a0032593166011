namespace Spindle.Interop;

internal static unsafe partial class Libc
{
    /// <summary><c>open(2)</c>, retried on EINTR: the descriptor, or the negated errno.</summary>
    internal static int OpenRetryingInterrupts(string path, int flags, int mode)
    {
        int fd;
        do
        {
            fd = Open(path, flags, mode);
        }
        while (fd < 0 && Errno.Last == Errno.EINTR);
        return fd >= 0 ? fd : -Errno.Last;
    }
}
