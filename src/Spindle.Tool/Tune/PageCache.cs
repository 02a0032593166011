using System.Runtime.InteropServices;

namespace Spindle.Tool.Tune;

/// <summary>Drops one file's pages from the page cache, so that the next read comes from the device.</summary>
internal static partial class PageCache
{
    private const int PosixFadvDontNeed = 4;

    /// <summary>
    /// <c>fsync</c> (only clean pages can be dropped), then <c>posix_fadvise(POSIX_FADV_DONTNEED)</c> over the whole
    /// file. Unlike <c>/proc/sys/vm/drop_caches</c> it needs no privilege and leaves other files' pages alone.
    /// On tmpfs the pages are the file itself and stay.
    /// </summary>
    public static void Drop(string path)
    {
        using var handle = File.OpenHandle(path, FileMode.Open, FileAccess.Read);
        if (Fsync(handle) != 0)
        {
            throw new IOException($"cannot drop the page cache of {path}: fsync failed (errno {Marshal.GetLastPInvokeError()})");
        }
        int error = PosixFadvise(handle, 0, 0, PosixFadvDontNeed);   // returns the error number itself
        if (error != 0)
        {
            throw new IOException($"cannot drop the page cache of {path}: posix_fadvise failed (errno {error})");
        }
    }

    [LibraryImport("libc", EntryPoint = "fsync", SetLastError = true)]
    private static partial int Fsync(SafeHandle fd);

    [LibraryImport("libc", EntryPoint = "posix_fadvise")]
    private static partial int PosixFadvise(SafeHandle fd, long offset, long length, int advice);
}
