using Microsoft.Win32.SafeHandles;
using Spindle.Engines.FastPath;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Engines;

public partial class FileSystemRoutingTests
{
    private const int POSIX_FADV_RANDOM = 1;

    [Fact]
    public async Task On_FUSE_pages_the_page_cache_holds_are_read_on_the_callers_thread_and_the_rest_on_pool_threads_with_System_IOs_bytes()
    {
        using FuseMount? fuse = FuseMount.TryMount(out string reason);
        if (fuse is null)
        {
            Console.WriteLine($"skipped: {reason}");
            return;
        }
        const int Size = 1 << 20;
        byte[] data = RandomBytes(Size);
        File.WriteAllBytes(fuse.SourceFile("data"), data);
        using SafeFileHandle handle = File.OpenHandle(fuse.File("data"), FileMode.Open, FileAccess.Read);
        HandleFacts facts = HandleFacts.Of(handle);
        if (!facts.RefusesNonBlockingIo)
        {
            Console.WriteLine("skipped: this kernel's FUSE reads without blocking, so RWF_NOWAIT serves its cached pages");
            return;
        }
        Assert.True(facts.ReadsWhenCached);

        // No readahead on this open file, so that exactly the pages read below are cached: the first half, not the second.
        int fd = (int)handle.DangerousGetHandle();
        Assert.Equal(0, TestLibc.PosixFAdvise(fd, 0, 0, POSIX_FADV_RANDOM));
        Assert.Equal(0, TestLibc.PosixFAdvise(fd, 0, 0, TestLibc.POSIX_FADV_DONTNEED));
        byte[] firstHalf = new byte[Size / 2];
        for (int done = 0; done < firstHalf.Length;)
        {
            done += System.IO.RandomAccess.Read(handle, firstHalf.AsSpan(done), done);
        }

        var mechanisms = new List<string?>();
        using System.Diagnostics.Metrics.MeterListener listener = ListenForMechanisms(mechanisms);
        // Cached: aligned, unaligned, across a page boundary, and the last bytes of the first half.
        long[] cachedOffsets = [0, 4096, 1000, 8190, 300_000, Size / 2 - 4096];
        foreach (long offset in cachedOffsets)
        {
            await AssertReadsAsSystemIO(handle, offset);
        }
        lock (mechanisms)
        {
            Assert.Equal(Enumerable.Repeat("fastpath", cachedOffsets.Length), mechanisms);
            mechanisms.Clear();
        }

        // Not all cached: a read from the last cached page into the first uncached one, then reads of pages none of the
        // reads before touched.
        long[] uncachedOffsets = [Size / 2 - 2048, Size / 2 + 8192, Size / 2 + 65_536 + 100, Size - 4096];
        foreach (long offset in uncachedOffsets)
        {
            await AssertReadsAsSystemIO(handle, offset);
        }
        lock (mechanisms)
        {
            Assert.Equal(Enumerable.Repeat("pool", uncachedOffsets.Length), mechanisms);
        }
        Assert.True(facts.ReadsWhenCached);

        // Past the end: nothing cached there, so a pool thread reads it and returns 0, as System.IO does.
        byte[] beyond = new byte[4096];
        Assert.Equal(System.IO.RandomAccess.Read(handle, beyond, Size + 8192), await SpindleRandomAccess.ReadAsync(handle, beyond, Size + 8192));
    }

    private static async Task AssertReadsAsSystemIO(SafeFileHandle handle, long offset)
    {
        byte[] spindle = new byte[4096];
        int read = await SpindleRandomAccess.ReadAsync(handle, spindle, offset);
        byte[] expected = new byte[4096];
        Assert.Equal(System.IO.RandomAccess.Read(handle, expected, offset), read);
        Assert.Equal(expected, spindle);
    }
}
