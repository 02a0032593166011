using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Interop;

namespace Spindle.Workloads;

/// <summary>
/// Opens files with O_DIRECT. Until <see cref="SpindleFileOptions"/> offers direct I/O, the benchmarks
/// open the descriptor themselves through Spindle's libc binding; System.IO and Spindle then share it.
/// </summary>
public static class DirectIo
{
    /// <summary>The alignment used for O_DIRECT offsets, lengths and buffer addresses.</summary>
    public const int Alignment = 4096;

    /// <summary>Opens an existing file with O_DIRECT for reading and writing.</summary>
    /// <exception cref="NotSupportedException">The file system does not support O_DIRECT (EINVAL, e.g. tmpfs).</exception>
    /// <exception cref="IOException">The open fails for another reason.</exception>
    public static SafeFileHandle OpenHandle(string path)
    {
        int fd = Libc.Open(path, OpenFlags.O_RDWR | OpenFlags.O_CLOEXEC | OpenFlags.O_DIRECT, 0);
        if (fd < 0)
        {
            int errno = Marshal.GetLastPInvokeError();
            const int EINVAL = 22;
            if (errno == EINVAL)
            {
                throw new NotSupportedException($"no O_DIRECT on the file system of {Path.GetDirectoryName(path)}");
            }
            throw new IOException($"cannot open {path} with O_DIRECT (errno {errno})");
        }
        return new SafeFileHandle(fd, ownsHandle: true);
    }
}
