using System.Runtime.InteropServices;

namespace Spindle.ZoneTree;

/// <summary><c>fsync</c> of a directory: what makes a new, renamed or deleted entry durable on Linux.</summary>
internal static partial class DirectorySync
{
    private const int O_RDONLY = 0;
    private const int O_DIRECTORY = 0x10000;
    private const int O_CLOEXEC = 0x80000;

    internal static void Sync(string path)
    {
        int fd = Open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
        {
            throw Failure("open", path);
        }
        try
        {
            if (Fsync(fd) != 0)
            {
                throw Failure("fsync", path);
            }
        }
        finally
        {
            _ = Close(fd);
        }
    }

    private static IOException Failure(string call, string path)
    {
        int errno = Marshal.GetLastPInvokeError();
        return new IOException($"{call} of directory '{path}' failed: {Marshal.GetPInvokeErrorMessage(errno)}", errno);
    }

    [LibraryImport("libc", EntryPoint = "open", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static partial int Open(string path, int flags);

    [LibraryImport("libc", EntryPoint = "fsync", SetLastError = true)]
    private static partial int Fsync(int fd);

    [LibraryImport("libc", EntryPoint = "close", SetLastError = true)]
    private static partial int Close(int fd);
}
