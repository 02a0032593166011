using System.Runtime.InteropServices;

namespace Spindle.Interop;

internal static unsafe partial class Libc
{
    // cachestat(2), Linux 6.5: one number on every architecture (the unified system-call table).
    private const long CacheStatNumber = 451;

    [StructLayout(LayoutKind.Sequential)]
    private struct CacheStatRange
    {
        public ulong Offset;
        public ulong Length;
    }

    [StructLayout(LayoutKind.Sequential)]
    private struct CacheStatResult
    {
        public ulong Cached;
        public ulong Dirty;
        public ulong Writeback;
        public ulong Evicted;
        public ulong RecentlyEvicted;
    }

    /// <summary>
    /// How many pages of <paramref name="length"/> bytes from <paramref name="offset"/> (a multiple of the page size) the
    /// page cache holds for the file (<c>cachestat(2)</c>); -1 with errno set when the kernel does not say (ENOSYS before
    /// Linux 6.5, EPERM under a filter that does not know the call).
    /// </summary>
    internal static long CachedPages(SafeHandle fd, long offset, long length)
    {
        CacheStatRange range = new() { Offset = (ulong)offset, Length = (ulong)length };
        CacheStatResult result = default;
        return Syscall(CacheStatNumber, fd, (long)&range, (long)&result, 0, 0, 0) == 0 ? (long)result.Cached : -1;
    }
}
