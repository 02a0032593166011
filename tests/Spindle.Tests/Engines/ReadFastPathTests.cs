using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Engines;

/// <summary>Async reads of cached data complete on the caller's thread, with System.IO's results.</summary>
[Collection(SerialCollection.Name)]
public partial class ReadFastPathTests
{
    [LibraryImport("libc", EntryPoint = "posix_fadvise")]
    private static partial int PosixFAdvise(int fd, long offset, long length, int advice);

    private const int POSIX_FADV_DONTNEED = 4;

    [Theory]
    [MemberData(nameof(EngineCases.Async), MemberType = typeof(EngineCases))]
    public async Task Cached_data_is_read_synchronously_and_counted(IoEngine engine)
    {
        using var dir = new TempDirectory();
        string path = dir.File("f");
        byte[] data = new byte[65536];
        new Random(11).NextBytes(data);
        File.WriteAllBytes(path, data);
        using SafeFileHandle handle = SpindleFile.OpenHandle(path, FileMode.Open, FileAccess.Read);
        byte[] buffer = new byte[65536];
        _ = SpindleRandomAccess.Read(handle, buffer, 0); // make sure every page is cached

        Array.Clear(buffer);
        MetricsSnapshot before = SpindleTotals.Snapshot();
        ValueTask<int> read = SpindleRandomAccess.ReadAsync(handle, buffer, 0, engine);
        Assert.True(read.IsCompletedSuccessfully, "a cached read should complete synchronously");
        Assert.Equal(data.Length, await read);
        Assert.Equal(data, buffer);
        Assert.True(SpindleTotals.Snapshot().FastPathHits > before.FastPathHits);

        // A scatter read of cached pages too.
        Memory<byte>[] parts = [new byte[1000], new byte[64536]];
        before = SpindleTotals.Snapshot();
        ValueTask<long> scatter = SpindleRandomAccess.ReadAsync(handle, parts, 0, engine);
        Assert.True(scatter.IsCompletedSuccessfully, "a cached scatter read should complete synchronously");
        Assert.Equal(data.Length, await scatter);
        Assert.Equal(data, parts[0].ToArray().Concat(parts[1].ToArray()).ToArray());
        Assert.True(SpindleTotals.Snapshot().FastPathHits > before.FastPathHits);

        // Switched off for the call, the same read goes through the engine and is not counted as a hit.
        before = SpindleTotals.Snapshot();
        Array.Clear(buffer);
        Assert.Equal(data.Length, await EngineCases.Resolve(engine).ReadAsync(handle, buffer, 0, useFastPath: false, default));
        Assert.Equal(data, buffer);
        Assert.Equal(before.FastPathHits, SpindleTotals.Snapshot().FastPathHits);
    }

    [Theory]
    [MemberData(nameof(EngineCases.Async), MemberType = typeof(EngineCases))]
    public async Task The_ReadFastPath_option_switches_the_fast_path_off_for_handles_and_streams(IoEngine engine)
    {
        using var dir = new TempDirectory();
        string path = dir.File("f");
        byte[] data = new byte[16384];
        new Random(12).NextBytes(data);
        File.WriteAllBytes(path, data);
        var options = new SpindleFileOptions { Mode = FileMode.Open, Access = FileAccess.Read, Options = FileOptions.Asynchronous, Engine = engine, ReadFastPath = false };
        byte[] buffer = new byte[data.Length];

        using (SafeFileHandle handle = SpindleFile.OpenHandle(path, options))
        {
            _ = SpindleRandomAccess.Read(handle, buffer, 0); // cached, so only the option keeps the fast path away
            Array.Clear(buffer);
            MetricsSnapshot before = SpindleTotals.Snapshot();
            Assert.Equal(data.Length, await SpindleRandomAccess.ReadAsync(handle, buffer, 0, engine).AsTask().WaitAsync(TimeSpan.FromSeconds(30)));
            Assert.Equal(data, buffer);
            Assert.Equal(before.FastPathHits, SpindleTotals.Snapshot().FastPathHits);
        }

        await using (var stream = new SpindleFileStream(path, options))
        {
            Array.Clear(buffer);
            MetricsSnapshot before = SpindleTotals.Snapshot();
            Assert.Equal(data.Length, await stream.ReadAsync(buffer).AsTask().WaitAsync(TimeSpan.FromSeconds(30)));
            Assert.Equal(data, buffer);
            Assert.Equal(before.FastPathHits, SpindleTotals.Snapshot().FastPathHits);
        }

        // The same read with the option left on is a hit: the assertions above can fail.
        using (SafeFileHandle handle = SpindleFile.OpenHandle(path, FileMode.Open, FileAccess.Read))
        {
            MetricsSnapshot before = SpindleTotals.Snapshot();
            Assert.Equal(data.Length, await SpindleRandomAccess.ReadAsync(handle, buffer, 0, engine).AsTask().WaitAsync(TimeSpan.FromSeconds(30)));
            Assert.True(SpindleTotals.Snapshot().FastPathHits > before.FastPathHits);
        }
    }

    [Theory]
    [MemberData(nameof(EngineCases.Async), MemberType = typeof(EngineCases))]
    public async Task A_partly_cached_range_still_reads_in_full_like_System_IO(IoEngine engine)
    {
        EngineCases.ReportIoUring(engine);
        using var dir = new TempDirectory();
        string path = dir.File("f");
        const int Length = 1 << 20;
        byte[] data = new byte[Length];
        new Random(12).NextBytes(data);
        File.WriteAllBytes(path, data);
        using SafeFileHandle handle = SpindleFile.OpenHandle(path, FileMode.Open, FileAccess.Read);
        using SafeFileHandle system = File.OpenHandle(path, FileMode.Open, FileAccess.Read);

        for (int round = 0; round < 3; round++)
        {
            // Cache the whole file, then drop the second half from the page cache.
            SpindleRandomAccess.FlushToDisk(handle);
            _ = SpindleRandomAccess.Read(handle, new byte[Length], 0);
            Assert.Equal(0, PosixFAdvise((int)handle.DangerousGetHandle(), Length / 2, Length / 2, POSIX_FADV_DONTNEED));

            byte[] buffer = new byte[Length + 100];
            int n = await SpindleRandomAccess.ReadAsync(handle, buffer, 100, engine).AsTask().WaitAsync(TimeSpan.FromSeconds(30));
            byte[] expected = new byte[Length + 100];
            int expectedCount = await System.IO.RandomAccess.ReadAsync(system, expected, 100);
            Assert.Equal(expectedCount, n);
            Assert.Equal(expected, buffer);
        }
    }

    // The page cache copies whole pages, so a cached read that stops inside a page stopped at the end of the
    // file: it completes on the caller's thread as one operation, with no engine round trip for "the rest".
    [Theory]
    [MemberData(nameof(EngineCases.Async), MemberType = typeof(EngineCases))]
    public async Task A_cached_read_that_stops_inside_a_page_is_the_end_of_the_file(IoEngine engine)
    {
        EngineCases.ReportIoUring(engine);
        using var dir = new TempDirectory();
        byte[] data = CachedFile(dir, 5000, seed: 17);
        using SafeFileHandle handle = SpindleFile.OpenHandle(dir.File("f"), FileMode.Open, FileAccess.Read);
        using SafeFileHandle system = File.OpenHandle(dir.File("f"), FileMode.Open, FileAccess.Read);

        foreach (long offset in new long[] { 0, 100, 4096, 4999 })
        {
            byte[] buffer = new byte[8192];
            byte[] expected = new byte[8192];
            int expectedCount = System.IO.RandomAccess.Read(system, expected, offset);
            MetricsSnapshot before = SpindleTotals.Snapshot();
            ValueTask<int> read = SpindleRandomAccess.ReadAsync(handle, buffer, offset, engine);
            Assert.True(read.IsCompletedSuccessfully, $"the read at {offset} ends inside the last page and should complete at once");
            Assert.Equal(expectedCount, await read);
            Assert.Equal(expected, buffer);
            Assert.Equal(before.Operations + 1, SpindleTotals.Snapshot().Operations);
        }

        // A scatter read past the end as well.
        Memory<byte>[] parts = [new byte[3000], new byte[3000]];
        MetricsSnapshot beforeScatter = SpindleTotals.Snapshot();
        ValueTask<long> scatter = SpindleRandomAccess.ReadAsync(handle, parts, 0, engine);
        Assert.True(scatter.IsCompletedSuccessfully, "a scatter read that ends inside the last page should complete at once");
        Assert.Equal(data.Length, await scatter);
        Assert.Equal(data, parts[0].ToArray().Concat(parts[1].ToArray()).Take(data.Length).ToArray());
        Assert.Equal(beforeScatter.FastPathHits + 1, SpindleTotals.Snapshot().FastPathHits);
    }

    // A file that ends on a page boundary gives the fast path no such proof: the engine reads on and finds the end.
    [Theory]
    [MemberData(nameof(EngineCases.Async), MemberType = typeof(EngineCases))]
    public async Task A_cached_read_that_stops_on_a_page_boundary_is_finished_by_the_engine_like_System_IO(IoEngine engine)
    {
        EngineCases.ReportIoUring(engine);
        using var dir = new TempDirectory();
        byte[] data = CachedFile(dir, 8192, seed: 18);
        using SafeFileHandle handle = SpindleFile.OpenHandle(dir.File("f"), FileMode.Open, FileAccess.Read);

        byte[] buffer = new byte[12288];
        Assert.Equal(8192, await SpindleRandomAccess.ReadAsync(handle, buffer, 0, engine).AsTask().WaitAsync(TimeSpan.FromSeconds(30)));
        Assert.Equal(data, buffer.AsSpan(0, 8192).ToArray());
        Memory<byte>[] parts = [new byte[6000], new byte[6000]];
        Assert.Equal(8192, await SpindleRandomAccess.ReadAsync(handle, parts, 0, engine).AsTask().WaitAsync(TimeSpan.FromSeconds(30)));
        Assert.Equal(data, parts[0].ToArray().Concat(parts[1].ToArray()).Take(8192).ToArray());
    }

    /// <summary>Writes <paramref name="length"/> random bytes to the file "f" and reads them back, so every page is cached.</summary>
    private static byte[] CachedFile(TempDirectory dir, int length, int seed)
    {
        byte[] data = new byte[length];
        new Random(seed).NextBytes(data);
        File.WriteAllBytes(dir.File("f"), data);
        Assert.Equal(data, File.ReadAllBytes(dir.File("f")));
        return data;
    }

    [Fact]
    public async Task Files_without_positions_and_empty_buffers_skip_the_fast_path()
    {
        using var dir = new TempDirectory();
        using var fifo = new Fifo(dir.File("fifo"));
        await SpindleRandomAccess.WriteAsync(fifo.Writer, new byte[] { 1, 2 }, 0);
        MetricsSnapshot before = SpindleTotals.Snapshot();
        byte[] buffer = new byte[2];
        Assert.Equal(2, await SpindleRandomAccess.ReadAsync(fifo.Reader, buffer, 0, IoEngine.ThreadPool).AsTask().WaitAsync(TimeSpan.FromSeconds(30)));
        Assert.Equal(new byte[] { 1, 2 }, buffer);
        Assert.Equal(before.FastPathHits, SpindleTotals.Snapshot().FastPathHits);
    }

    [Theory]
    [MemberData(nameof(EngineCases.Async), MemberType = typeof(EngineCases))]
    public async Task Small_writes_to_a_local_file_are_done_inline_and_large_ones_by_the_engine(IoEngine engine)
    {
        using var dir = new TempDirectory();
        using SafeFileHandle handle = SpindleFile.OpenHandle(dir.File("f"), FileMode.Create, FileAccess.ReadWrite);
        byte[] small = new byte[4096];
        byte[] large = new byte[1 << 20];
        new Random(13).NextBytes(small);
        new Random(14).NextBytes(large);

        MetricsSnapshot before = SpindleTotals.Snapshot();
        ValueTask write = SpindleRandomAccess.WriteAsync(handle, small, 0, engine);
        Assert.True(write.IsCompletedSuccessfully, "a small write to ext4/xfs/tmpfs completes on the caller's thread");
        await write;
        Assert.Equal(before.InlineWrites + 1, SpindleTotals.Snapshot().InlineWrites);

        before = SpindleTotals.Snapshot();
        await SpindleRandomAccess.WriteAsync(handle, large, 4096, engine).AsTask().WaitAsync(TimeSpan.FromSeconds(30));
        Assert.Equal(before.InlineWrites, SpindleTotals.Snapshot().InlineWrites);

        byte[] expected = [.. small, .. large];
        Assert.Equal(expected, File.ReadAllBytes(dir.File("f")));
    }

    [Theory]
    [MemberData(nameof(EngineCases.Async), MemberType = typeof(EngineCases))]
    public async Task Writes_to_a_write_through_file_are_never_done_inline(IoEngine engine)
    {
        using var dir = new TempDirectory();
        // WriteThrough is O_SYNC: each write waits for the device, which must not happen on the caller's thread.
        using SafeFileHandle handle = File.OpenHandle(dir.File("f"), FileMode.Create, FileAccess.ReadWrite, FileShare.ReadWrite, FileOptions.WriteThrough);
        byte[] small = new byte[4096];
        new Random(16).NextBytes(small);
        MetricsSnapshot before = SpindleTotals.Snapshot();
        await SpindleRandomAccess.WriteAsync(handle, small, 0, engine).AsTask().WaitAsync(TimeSpan.FromSeconds(30));
        Assert.Equal(before.InlineWrites, SpindleTotals.Snapshot().InlineWrites);
        Assert.Equal(small, File.ReadAllBytes(dir.File("f")));
    }
}

public class ReadFastPathPerHandleTests
{
    [Theory]
    [MemberData(nameof(EngineCases.Async), MemberType = typeof(EngineCases))]
    public async Task A_handle_with_the_fast_path_off_reads_through_the_engine(IoEngine engine)
    {
        using var dir = new Spindle.Tests.Infrastructure.TempDirectory();
        string path = dir.File("f");
        byte[] data = new byte[8192];
        new Random(15).NextBytes(data);
        File.WriteAllBytes(path, data);
        using Microsoft.Win32.SafeHandles.SafeFileHandle handle = SpindleFile.OpenHandle(path, FileMode.Open, FileAccess.Read);
        Spindle.Engines.FastPath.HandleFacts.Of(handle).NonBlockingReads = false; // as SpindleFileOptions.ReadFastPath = false does
        byte[] buffer = new byte[8192];
        // Cached data, yet the fast path declines the handle, so the engine reads it, with the same bytes.
        Assert.Equal(data.Length, await SpindleRandomAccess.ReadAsync(handle, buffer, 0, engine).AsTask().WaitAsync(TimeSpan.FromSeconds(30)));
        Assert.Equal(data, buffer);
        Assert.False(Spindle.Engines.FastPath.ReadFastPath.TryRead(handle, Spindle.Engines.FastPath.HandleFacts.Of(handle), buffer, 0, engine) >= 0);
    }
}
