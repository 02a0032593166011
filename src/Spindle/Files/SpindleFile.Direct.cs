using System.Runtime.Versioning;
using Microsoft.Win32.SafeHandles;
using Spindle.Direct;
using Spindle.Interop;
using Spindle.Syscalls;
using Spindle.Handles;

namespace Spindle;

public static partial class SpindleFile
{
    /// <summary>
    /// Gets the alignment unbuffered (<c>O_DIRECT</c>) I/O needs on a file: from <c>statx(STATX_DIOALIGN)</c>
    /// where the kernel reports it, else the device's logical block size, else the file system's block size.
    /// </summary>
    /// <param name="handle">An open handle (any handle, direct or not).</param>
    /// <returns>The alignment of buffer addresses, and of file offsets and lengths.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="handle"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="handle"/> is invalid.</exception>
    /// <exception cref="ObjectDisposedException">The handle is closed.</exception>
    /// <exception cref="PlatformNotSupportedException">Not on Linux.</exception>
    [SupportedOSPlatform("linux")]
    public static DirectIOAlignment GetDirectIOAlignment(SafeFileHandle handle)
    {
        HandleValidation.ValidateHandle(handle);
        if (Portable.PassThrough.Enabled)
        {
            throw Portable.PassThrough.LinuxOnly(nameof(GetDirectIOAlignment));
        }
        if (DirectHandles.TryGet(handle, out DirectIOAlignment known))
        {
            return known;
        }
        return AlignmentProbe.For(handle, null);
    }

    /// <summary>
    /// Whether a handle does unbuffered (<c>O_DIRECT</c>) I/O, as the kernel reports it (<c>fcntl(F_GETFL)</c>).
    /// False for a handle opened with <see cref="SpindleFileOptions.DirectIOFallback"/> on a file system
    /// that refused direct I/O.
    /// </summary>
    /// <param name="handle">An open handle.</param>
    /// <returns>True when the handle bypasses the page cache; always false off Linux.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="handle"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="handle"/> is invalid.</exception>
    /// <exception cref="ObjectDisposedException">The handle is closed.</exception>
    public static bool IsDirectIO(SafeFileHandle handle)
    {
        HandleValidation.ValidateHandle(handle);
        if (Portable.PassThrough.Enabled)
        {
            return false; // only Linux opens direct handles
        }
        int flags = Libc.Fcntl(handle, LinuxConstants.F_GETFL, 0);
        if (flags < 0)
        {
            throw IoErrors.ForErrno(Errno.Last, null);
        }
        return (flags & OpenFlags.O_DIRECT) != 0;
    }
}
