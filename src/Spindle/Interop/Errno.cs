using System.Runtime.InteropServices;
using System.Text;

namespace Spindle.Interop;

/// <summary>The errno values Spindle reacts to (Linux numbering, the same on every architecture).</summary>
internal static class Errno
{
    internal const int EPERM = 1;
    internal const int ENOENT = 2;
    internal const int EINTR = 4;
    internal const int EIO = 5;
    internal const int ENXIO = 6;
    internal const int EBADF = 9;
    internal const int EAGAIN = 11;
    internal const int ENOMEM = 12;
    internal const int EACCES = 13;
    internal const int EFAULT = 14;
    internal const int EBUSY = 16;
    internal const int EEXIST = 17;
    internal const int EXDEV = 18;
    internal const int ENOTDIR = 20;
    internal const int EISDIR = 21;
    internal const int EINVAL = 22;
    internal const int ENFILE = 23;
    internal const int EMFILE = 24;
    internal const int ETXTBSY = 26;
    internal const int EFBIG = 27;
    internal const int ENOSPC = 28;
    internal const int ESPIPE = 29;
    internal const int EROFS = 30;
    internal const int EPIPE = 32;
    internal const int ENAMETOOLONG = 36;
    internal const int ENOSYS = 38;
    internal const int ELOOP = 40;
    internal const int ETIME = 62;
    internal const int EOPNOTSUPP = 95;
    internal const int ETIMEDOUT = 110;
    internal const int EDQUOT = 122;
    internal const int ECANCELED = 125;
    internal const int EWOULDBLOCK = EAGAIN;

    /// <summary>The errno of the last P/Invoke on this thread.</summary>
    internal static int Last => Marshal.GetLastPInvokeError();

    /// <summary>The C library's text for an errno, as System.IO shows it.</summary>
    internal static unsafe string Message(int errno)
    {
        byte* buffer = stackalloc byte[256];
        byte* text = Libc.StrErrorR(errno, buffer, 256);
        return text == null ? $"Unknown error {errno}" : Encoding.UTF8.GetString(MemoryMarshal.CreateReadOnlySpanFromNullTerminated(text));
    }
}
