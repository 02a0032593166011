using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Engines;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Engines;

/// <summary>
/// Large buffered writes to a local file on the io_uring engine run on a pool thread (io_uring would
/// punt them to an io-wq worker); writes that really wait for the device still go through the ring.
/// Reads the process-wide io_uring_enter counter, so the tests run alone.
/// </summary>
[Collection(SerialCollection.Name)]
public class PageCacheWriteRoutingTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task Large_page_cache_writes_on_io_uring_skip_the_ring_and_match_System_IO()
    {
        if (!EngineCases.ReportIoUring(IoEngine.IoUring))
        {
            return;
        }
        using var dir = new TempDirectory();
        byte[] large = new byte[1 << 20];
        byte[] gatherFirst = new byte[300_000];
        byte[] gatherSecond = new byte[200_000];
        new Random(21).NextBytes(large);
        new Random(22).NextBytes(gatherFirst);
        new Random(23).NextBytes(gatherSecond);
        ReadOnlyMemory<byte>[] gather = [gatherFirst, gatherSecond];
        long gatherOffset = large.Length + 12345;

        using (SafeFileHandle expected = File.OpenHandle(dir.File("system-io"), FileMode.Create, FileAccess.ReadWrite, FileShare.None, FileOptions.Asynchronous))
        {
            await System.IO.RandomAccess.WriteAsync(expected, large, 0);
            await System.IO.RandomAccess.WriteAsync(expected, gather, gatherOffset);
        }

        using (SafeFileHandle handle = SpindleFile.OpenHandle(dir.File("spindle"), FileMode.Create, FileAccess.ReadWrite, FileShare.None, FileOptions.Asynchronous))
        {
            MetricsSnapshot before = SpindleMetrics.Snapshot();
            await SpindleRandomAccess.WriteAsync(handle, large, 0, IoEngine.IoUring).AsTask().WaitAsync(Timeout);
            await SpindleRandomAccess.WriteAsync(handle, gather, gatherOffset, IoEngine.IoUring).AsTask().WaitAsync(Timeout);
            MetricsSnapshot after = SpindleMetrics.Snapshot();

            Assert.Equal(before.Submissions, after.Submissions);
            Assert.Equal(before.InlineWrites, after.InlineWrites);
            Assert.True(after.Operations - before.Operations >= 2, "the writes were not counted as operations");
        }

        Assert.Equal(File.ReadAllBytes(dir.File("system-io")), File.ReadAllBytes(dir.File("spindle")));
    }

    [Fact]
    public async Task Without_the_fast_path_large_page_cache_writes_still_go_through_the_ring()
    {
        if (!EngineCases.ReportIoUring(IoEngine.IoUring))
        {
            return;
        }
        using var dir = new TempDirectory();
        byte[] large = new byte[1 << 20];
        new Random(24).NextBytes(large);
        FileIoEngine ring = EngineSelector.Get(IoEngine.IoUring);

        using (SafeFileHandle handle = SpindleFile.OpenHandle(dir.File("f"), FileMode.Create, FileAccess.ReadWrite))
        {
            MetricsSnapshot before = SpindleMetrics.Snapshot();
            await ring.WriteAsync(handle, large, 0, useFastPath: false, default).AsTask().WaitAsync(Timeout);
            await ring.WriteGatherAsync(handle, new ReadOnlyMemory<byte>[] { large.AsMemory(0, 100_000), large.AsMemory(100_000) }, large.Length, useFastPath: false, default).AsTask().WaitAsync(Timeout);
            Assert.True(SpindleMetrics.Snapshot().Submissions > before.Submissions, "the ring never ran");
        }

        Assert.Equal([.. large, .. large], File.ReadAllBytes(dir.File("f")));
    }

    [Fact]
    public async Task Large_writes_to_a_write_through_file_on_io_uring_go_through_the_ring()
    {
        if (!EngineCases.ReportIoUring(IoEngine.IoUring))
        {
            return;
        }
        using var dir = new TempDirectory();
        byte[] large = new byte[256 * 1024];
        new Random(25).NextBytes(large);

        // WriteThrough is O_SYNC: the write waits for the device, which is what the ring is for.
        using (SafeFileHandle handle = File.OpenHandle(dir.File("f"), FileMode.Create, FileAccess.ReadWrite, FileShare.None, FileOptions.WriteThrough))
        {
            MetricsSnapshot before = SpindleMetrics.Snapshot();
            await SpindleRandomAccess.WriteAsync(handle, large, 0, IoEngine.IoUring).AsTask().WaitAsync(Timeout);
            Assert.True(SpindleMetrics.Snapshot().Submissions > before.Submissions, "an O_SYNC write skipped the ring");
        }

        Assert.Equal(large, File.ReadAllBytes(dir.File("f")));
    }
}
