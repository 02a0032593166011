using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Engines;
using Spindle.Tests.Beyond;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Engines;

/// <summary>
/// Buffered writes to a regular file on the io_uring engine run on a pool thread, as System.IO's do
/// (io_uring would punt them to its io-wq workers, one at a time per file); O_DIRECT writes, which
/// wait for the device without a copy, go through the ring.
/// Counts the operations the shared ring placed (the ring's own enters, its waits, never count), so the tests run alone.
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
            MetricsSnapshot before = SpindleTotals.Snapshot();
            long placedBefore = EngineCounts.SharedRingPlacements;
            await SpindleRandomAccess.WriteAsync(handle, large, 0, IoEngine.IoUring).AsTask().WaitAsync(Timeout);
            await SpindleRandomAccess.WriteAsync(handle, gather, gatherOffset, IoEngine.IoUring).AsTask().WaitAsync(Timeout);
            MetricsSnapshot after = SpindleTotals.Snapshot();

            Assert.Equal(placedBefore, EngineCounts.SharedRingPlacements);
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
        byte[] large = new byte[192 * 1024]; // above the fast path's copies, below row 9b's pool transfers
        new Random(24).NextBytes(large);
        FileIoEngine ring = EngineSelector.Get(IoEngine.IoUring);
        using var overlapping = HeldFileRequest.Hold(); // a lone request would run on a pool thread

        using (SafeFileHandle handle = SpindleFile.OpenHandle(dir.File("f"), FileMode.Create, FileAccess.ReadWrite))
        {
            long placedBefore = EngineCounts.SharedRingPlacements;
            await ring.WriteAsync(handle, large, 0, useFastPath: false, default).AsTask().WaitAsync(Timeout);
            await ring.WriteGatherAsync(handle, new ReadOnlyMemory<byte>[] { large.AsMemory(0, 100_000), large.AsMemory(100_000) }, large.Length, useFastPath: false, default).AsTask().WaitAsync(Timeout);
            Assert.True(EngineCounts.SharedRingPlacements >= placedBefore + 2, "the ring never ran");
        }

        Assert.Equal([.. large, .. large], File.ReadAllBytes(dir.File("f")));
    }

    [Fact]
    public async Task Writes_to_a_write_through_file_on_io_uring_run_side_by_side_on_the_pool_and_match_System_IO()
    {
        // WriteThrough is O_SYNC through the page cache: io_uring would hand each write to an io-wq
        // worker, one at a time for the file, each waiting for the device; System.IO's pool threads
        // wait side by side. Spindle does what System.IO does: the ring is not used.
        if (!EngineCases.ReportIoUring(IoEngine.IoUring))
        {
            return;
        }
        using var dir = new TempDirectory();
        byte[][] blocks = [.. Enumerable.Range(0, 8).Select(i =>
        {
            byte[] block = new byte[64 * 1024];
            new Random(30 + i).NextBytes(block);
            return block;
        })];

        using (SafeFileHandle expected = File.OpenHandle(dir.File("system-io"), FileMode.Create, FileAccess.ReadWrite, FileShare.None, FileOptions.WriteThrough | FileOptions.Asynchronous))
        {
            await Task.WhenAll(blocks.Select((block, i) => System.IO.RandomAccess.WriteAsync(expected, block, (long)i * block.Length).AsTask()));
        }
        using (SafeFileHandle handle = SpindleFile.OpenHandle(dir.File("spindle"), FileMode.Create, FileAccess.ReadWrite, FileShare.None, FileOptions.WriteThrough | FileOptions.Asynchronous))
        {
            long placedBefore = EngineCounts.SharedRingPlacements;
            await Task.WhenAll(blocks.Select((block, i) => SpindleRandomAccess.WriteAsync(handle, block, (long)i * block.Length, IoEngine.IoUring).AsTask())).WaitAsync(Timeout);
            ReadOnlyMemory<byte>[] gather = [blocks[0].AsMemory(0, 1000), blocks[1].AsMemory(0, 3000)];
            await SpindleRandomAccess.WriteAsync(handle, gather, 8L * 64 * 1024, IoEngine.IoUring).AsTask().WaitAsync(Timeout);
            Assert.Equal(placedBefore, EngineCounts.SharedRingPlacements);
        }
        using (SafeFileHandle expected = File.OpenHandle(dir.File("system-io"), FileMode.Open, FileAccess.ReadWrite, FileShare.None, FileOptions.WriteThrough))
        {
            System.IO.RandomAccess.Write(expected, [blocks[0].AsMemory(0, 1000), blocks[1].AsMemory(0, 3000)], 8L * 64 * 1024);
        }

        Assert.Equal(File.ReadAllBytes(dir.File("system-io")), File.ReadAllBytes(dir.File("spindle")));
    }

    [Fact]
    public async Task Direct_writes_on_io_uring_go_through_the_ring_whatever_their_size()
    {
        if (!EngineCases.ReportIoUring(IoEngine.IoUring))
        {
            return;
        }
        using var dir = DirectIOTests.DiskDirectory();
        const int Small = 128 * 1024, Large = 1024 * 1024;
        using System.Buffers.IMemoryOwner<byte> owner = AlignedMemoryPool.Shared.Rent(Small + Large);
        Memory<byte> data = owner.Memory[..(Small + Large)];
        new Random(25).NextBytes(data.Span);

        // O_DIRECT: the write waits for the device without a copy, which is what the ring is for once requests overlap
        // (a lone one runs on a pool thread, row 9); one of 256 KiB or more too (that row is gone).
        using var overlapping = HeldFileRequest.Hold();
        using (SafeFileHandle handle = SpindleFile.OpenHandle(dir.File("f"), new SpindleFileOptions { Mode = FileMode.Create, Access = FileAccess.ReadWrite, DirectIO = true }))
        {
            long before = EngineCounts.SharedRingPlacements;
            await SpindleRandomAccess.WriteAsync(handle, data[..Small], 0, IoEngine.IoUring).AsTask().WaitAsync(Timeout);
            long afterSmall = EngineCounts.SharedRingPlacements;
            Assert.True(afterSmall > before, "an O_DIRECT write skipped the ring");
            await SpindleRandomAccess.WriteAsync(handle, data[Small..], Small, IoEngine.IoUring).AsTask().WaitAsync(Timeout);
            Assert.True(EngineCounts.SharedRingPlacements > afterSmall, "a large O_DIRECT write skipped the ring");
        }

        Assert.Equal(data.ToArray(), File.ReadAllBytes(dir.File("f")));
    }

    [Theory]
    [MemberData(nameof(EngineCases.Async), MemberType = typeof(EngineCases))]
    public async Task Small_gather_writes_to_a_local_file_are_done_inline_and_match_System_IO(IoEngine engine)
    {
        using var dir = new TempDirectory();
        byte[] first = new byte[3000];
        byte[] second = new byte[5000];
        new Random(26).NextBytes(first);
        new Random(27).NextBytes(second);
        ReadOnlyMemory<byte>[] gather = [first, ReadOnlyMemory<byte>.Empty, second];

        using (SafeFileHandle expected = File.OpenHandle(dir.File("system-io"), FileMode.Create, FileAccess.ReadWrite, FileShare.None, FileOptions.Asynchronous))
        {
            await System.IO.RandomAccess.WriteAsync(expected, gather, 777);
        }
        using (SafeFileHandle handle = SpindleFile.OpenHandle(dir.File("spindle"), FileMode.Create, FileAccess.ReadWrite, FileShare.None, FileOptions.Asynchronous))
        {
            MetricsSnapshot before = SpindleTotals.Snapshot();
            long placedBefore = EngineCounts.SharedRingPlacements;
            ValueTask write = SpindleRandomAccess.WriteAsync(handle, gather, 777, engine);
            Assert.True(write.IsCompletedSuccessfully, "a small gather write to a local file completes on the caller's thread");
            await write;
            MetricsSnapshot after = SpindleTotals.Snapshot();
            Assert.Equal(before.InlineWrites + 1, after.InlineWrites);
            Assert.Equal(placedBefore, EngineCounts.SharedRingPlacements);
        }

        Assert.Equal(File.ReadAllBytes(dir.File("system-io")), File.ReadAllBytes(dir.File("spindle")));
    }

    [Fact]
    public async Task An_async_stream_on_io_uring_writes_page_cache_data_without_the_ring_and_matches_FileStream()
    {
        if (!EngineCases.ReportIoUring(IoEngine.IoUring))
        {
            return;
        }
        using var dir = new TempDirectory();
        byte[] chunk = new byte[1000];
        byte[] large = new byte[200_000];
        new Random(28).NextBytes(chunk);
        new Random(29).NextBytes(large);

        // Buffered small writes (the buffer goes out in 4 KiB writes), one large write past the buffer,
        // and a direct 4 KiB write: the same calls on both streams.
        static async Task WriteAll(Stream stream, byte[] chunk, byte[] large)
        {
            for (int i = 0; i < 50; i++)
            {
                await stream.WriteAsync(chunk);
            }
            await stream.WriteAsync(large);
            await stream.WriteAsync(large.AsMemory(0, 4096));
            await stream.FlushAsync();
        }

        await using (var expected = new FileStream(dir.File("system-io"), FileMode.Create, FileAccess.Write, FileShare.None, 4096, FileOptions.Asynchronous))
        {
            await WriteAll(expected, chunk, large).WaitAsync(Timeout);
        }

        var options = new SpindleFileOptions
        {
            Mode = FileMode.Create,
            Access = FileAccess.Write,
            Options = FileOptions.Asynchronous,
            Engine = IoEngine.IoUring,
        };
        await using (var stream = new SpindleFileStream(dir.File("spindle"), options))
        {
            Assert.Equal(IoEngine.IoUring, stream.Engine);
            MetricsSnapshot before = SpindleTotals.Snapshot();
            long placedBefore = EngineCounts.SharedRingPlacements;
            await WriteAll(stream, chunk, large).WaitAsync(Timeout);
            MetricsSnapshot after = SpindleTotals.Snapshot();
            Assert.True(after.InlineWrites - before.InlineWrites >= 10, $"{after.InlineWrites - before.InlineWrites} inline writes: the stream's small writes took the ring");
            Assert.Equal(placedBefore, EngineCounts.SharedRingPlacements);
        }

        Assert.Equal(File.ReadAllBytes(dir.File("system-io")), File.ReadAllBytes(dir.File("spindle")));
    }
}
