using System.IO.Pipes;
using Microsoft.Win32.SafeHandles;
using Spindle.Engines.IoUring;
using Spindle.Tests.Engines;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Reliability.Regressions;

/// <summary>
/// A write cancelled after the kernel took some of its bytes, and operations beyond the engine's pool: what
/// the caller is told must match what the kernel did, and what a burst created must not stay for ever.
/// </summary>
[Collection(SerialCollection.Name)]
public class EngineBookkeepingRegressionTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    [Theory]
    [MemberData(nameof(EngineCases.All), MemberType = typeof(EngineCases))]
    public async Task A_pipe_write_cancelled_after_its_first_bytes_either_delivers_everything_or_nothing(IoEngine engine)
    {
        EngineCases.ReportIoUring(engine);
        byte[] data = RandomBytes(1 << 20);
        using var reader = new AnonymousPipeServerStream(PipeDirection.In);
        using var writer = new SafeFileHandle(reader.ClientSafePipeHandle.DangerousGetHandle(), ownsHandle: false);
        using var cts = new CancellationTokenSource();

        // The pipe holds far less than 1 MiB: with no reader the write stops after the kernel took its first bytes.
        Task write = Task.Run(async () => await SpindleRandomAccess.WriteAsync(writer, data, 0, engine, cts.Token));
        await Task.Delay(100);
        Assert.False(write.IsCompleted);
        cts.Cancel();

        var received = new MemoryStream();
        Task drain = Task.Run(() => reader.CopyTo(received));
        OperationCanceledException? cancelled = null;
        try
        {
            await write.WaitAsync(Timeout);
        }
        catch (OperationCanceledException e)
        {
            cancelled = e;
        }
        reader.DisposeLocalCopyOfClientHandle();
        await drain.WaitAsync(Timeout);

        // System.IO's blocking write finishes once it started; a cancellation may only be reported when nothing was sent.
        if (cancelled is null)
        {
            Assert.Equal(data, received.ToArray());
        }
        else
        {
            Assert.Equal(0, received.Length);
        }
    }

    [Fact]
    public async Task A_cancelled_flush_of_a_buffered_pipe_stream_never_sends_bytes_twice()
    {
        byte[] data = RandomBytes(600_000);
        using var dir = new TempDirectory();
        string path = dir.File("fifo");
        TestLibc.CreateFifo(path);
        // Opening either end of a FIFO waits for the other.
        Task<FileStream> openReader = Task.Run(() => new FileStream(path, FileMode.Open, FileAccess.Read));
        var received = new MemoryStream();
        using (var stream = new SpindleFileStream(path, FileMode.Open, FileAccess.Write, FileShare.ReadWrite, 1 << 20, FileOptions.Asynchronous))
        using (FileStream reader = await openReader.WaitAsync(Timeout))
        {
            stream.Write(data); // buffered: smaller than the stream's buffer
            using var cts = new CancellationTokenSource(TimeSpan.FromMilliseconds(100));
            Task firstFlush = Task.Run(async () => await stream.FlushAsync(cts.Token));
            await Task.Delay(200);
            Task drain = Task.Run(() => reader.CopyTo(received));
            try
            {
                await firstFlush.WaitAsync(Timeout);
            }
            catch (OperationCanceledException)
            {
            }
            await stream.FlushAsync().WaitAsync(Timeout);
            await stream.DisposeAsync();
            await drain.WaitAsync(Timeout);
        }

        // FileStream delivers exactly what was written, once.
        Assert.Equal(data, received.ToArray());
    }

    [Fact]
    public async Task Operations_beyond_the_pool_are_freed_after_a_burst()
    {
        if (PrivateEngine.Create() is not IoUringEngine engine)
        {
            Console.WriteLine($"io_uring is not available ({IoUringEngine.UnavailableReason}): no operation table to check.");
            return;
        }
        using var dir = new TempDirectory();
        using var fifo = new Fifo(dir.File("fifo"));
        const int Burst = 6000; // more reads at once than the engine pools (4,096)

        for (int round = 0; round < 2; round++)
        {
            var reads = new Task<int>[Burst];
            for (int i = 0; i < Burst; i++)
            {
                reads[i] = engine.ReadAsync(fifo.Reader, new byte[1], 0, useFastPath: false, CancellationToken.None).AsTask();
            }
            SpindleRandomAccess.Write(fifo.Writer, new byte[Burst], 0);
            int[] counts = await Task.WhenAll(reads).WaitAsync(Timeout);
            Assert.All(counts, c => Assert.Equal(1, c));

            // What outlives the burst is at most what the pool keeps for reuse.
            Assert.InRange(engine.Operations.LiveSlots, 1, 4096);
        }
    }

    private static byte[] RandomBytes(int length)
    {
        byte[] data = new byte[length];
        new Random(length).NextBytes(data);
        return data;
    }
}
