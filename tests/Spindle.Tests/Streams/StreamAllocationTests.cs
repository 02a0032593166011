using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Streams;

/// <summary>Steady-state <c>ReadAsync</c>/<c>WriteAsync</c> allocate nothing per call, buffered or not.</summary>
[Collection(StreamMetricsCollection.Name)]
public class StreamAllocationTests
{
    private const int Calls = 5000;

    private static SpindleFileStream Open(string path, int bufferSize, IoEngine engine)
        => new(path, new SpindleFileOptions
        {
            Mode = FileMode.Create,
            Access = FileAccess.ReadWrite,
            BufferSize = bufferSize,
            Options = FileOptions.Asynchronous,
            Engine = engine,
        });

    /// <summary>One round: writes, then reads back, with small (buffered) and large (bypassing) sizes.</summary>
    private static void RoundOnSync(SpindleFileStream stream, byte[] small, byte[] large)
    {
        stream.Position = 0;
        for (int i = 0; i < Calls; i++)
        {
            stream.WriteAsync(i % 10 == 0 ? large : small).GetAwaiter().GetResult();
        }
        stream.Position = 0;
        for (int i = 0; i < Calls; i++)
        {
            stream.ReadAsync(i % 10 == 0 ? large : small).GetAwaiter().GetResult();
        }
    }

    [Theory]
    [InlineData(0)]
    [InlineData(4096)]
    public void ReadAsync_and_WriteAsync_allocate_nothing_on_the_Sync_engine(int bufferSize)
    {
        using var dir = new TempDirectory();
        using var stream = Open(dir.File("f"), bufferSize, IoEngine.Sync);
        byte[] small = new byte[100];
        byte[] large = new byte[8192];
        RoundOnSync(stream, small, large); // warm-up: the buffer, the semaphore, JIT
        long before = GC.GetAllocatedBytesForCurrentThread();
        RoundOnSync(stream, small, large);
        long allocated = GC.GetAllocatedBytesForCurrentThread() - before;
        Assert.Equal(0, allocated);
    }

    private static async Task RoundOnPoolAsync(SpindleFileStream stream, byte[] small, byte[] large)
    {
        stream.Position = 0;
        for (int i = 0; i < Calls; i++)
        {
            await stream.WriteAsync(i % 10 == 0 ? large : small);
        }
        stream.Position = 0;
        for (int i = 0; i < Calls; i++)
        {
            await stream.ReadAsync(i % 10 == 0 ? large : small);
        }
    }

    [Theory]
    [InlineData(0, IoEngine.ThreadPool)]
    [InlineData(4096, IoEngine.ThreadPool)]
    [InlineData(0, IoEngine.IoUring)]
    [InlineData(4096, IoEngine.IoUring)]
    public async Task ReadAsync_and_WriteAsync_allocate_nothing_per_call_on_pooled_engines(int bufferSize, IoEngine engine)
    {
        using var dir = new TempDirectory();
        await using var stream = Open(dir.File("f"), bufferSize, engine);
        byte[] small = new byte[100];
        byte[] large = new byte[8192];
        await RoundOnPoolAsync(stream, small, large).WaitAsync(TimeSpan.FromSeconds(60));
        await RoundOnPoolAsync(stream, small, large).WaitAsync(TimeSpan.FromSeconds(60));
        // Process-wide, so other threads' work is counted too: the quietest of three rounds must stay
        // under a byte per call (one allocation per call would be at least 24 bytes each time).
        long allocated = long.MaxValue;
        for (int attempt = 0; attempt < 3 && allocated >= 2 * Calls; attempt++)
        {
            long before = GC.GetTotalAllocatedBytes(precise: true);
            await RoundOnPoolAsync(stream, small, large).WaitAsync(TimeSpan.FromSeconds(60));
            allocated = Math.Min(allocated, GC.GetTotalAllocatedBytes(precise: true) - before);
        }
        Assert.True(allocated < 2 * Calls, $"{allocated} bytes for {2 * Calls} calls on {stream.Engine}");
    }
}
