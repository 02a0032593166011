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
        MetricsSnapshot before = SpindleMetrics.Snapshot();
        ValueTask<int> read = SpindleRandomAccess.ReadAsync(handle, buffer, 0, engine);
        Assert.True(read.IsCompletedSuccessfully, "a cached read should complete synchronously");
        Assert.Equal(data.Length, await read);
        Assert.Equal(data, buffer);
        Assert.True(SpindleMetrics.Snapshot().FastPathHits > before.FastPathHits);

        // Switched off for the call, the same read goes through the engine and is not counted as a hit.
        before = SpindleMetrics.Snapshot();
        Array.Clear(buffer);
        Assert.Equal(data.Length, await EngineCases.Resolve(engine).ReadAsync(handle, buffer, 0, useFastPath: false, default));
        Assert.Equal(data, buffer);
        Assert.Equal(before.FastPathHits, SpindleMetrics.Snapshot().FastPathHits);
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

    [Fact]
    public async Task Files_without_positions_and_empty_buffers_skip_the_fast_path()
    {
        using var dir = new TempDirectory();
        using var fifo = new Fifo(dir.File("fifo"));
        await SpindleRandomAccess.WriteAsync(fifo.Writer, new byte[] { 1, 2 }, 0);
        MetricsSnapshot before = SpindleMetrics.Snapshot();
        byte[] buffer = new byte[2];
        Assert.Equal(2, await SpindleRandomAccess.ReadAsync(fifo.Reader, buffer, 0, IoEngine.ThreadPool).AsTask().WaitAsync(TimeSpan.FromSeconds(30)));
        Assert.Equal(new byte[] { 1, 2 }, buffer);
        Assert.Equal(before.FastPathHits, SpindleMetrics.Snapshot().FastPathHits);
    }
}
