using System.Runtime.CompilerServices;
using Spindle.Tests.Infrastructure;
using Xunit.Abstractions;
using static Spindle.Tests.Reliability.ReliabilityKit;

namespace Spindle.Tests.Reliability.Lifetime;

/// <summary>Streams that are forgotten, or disposed while their operations run.</summary>
[Collection(SerialReliability.Name)]
public class StreamLifetimeTests(ITestOutputHelper output)
{
    [Fact]
    public Task An_undisposed_buffered_stream_is_flushed_by_its_finalizer_like_FileStream() => Bounded(() =>
    {
        using var dir = new TempDirectory();
        int descriptors = OpenDescriptors();
        WriteAndForget(dir.File("system"), dir.File("spindle"));
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
        byte[] expected = File.ReadAllBytes(dir.File("system"));
        Assert.Equal(3 * 1000, expected.Length); // FileStream's finalizer flushed its buffer...
        Assert.Equal(expected, File.ReadAllBytes(dir.File("spindle"))); // ...and so did Spindle's
        AssertNoDescriptorLeak(descriptors);
        return Task.CompletedTask;
    });

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void WriteAndForget(string systemPath, string spindlePath)
    {
        byte[] data = Pattern(1000, 4);
        var system = new FileStream(systemPath, FileMode.Create, FileAccess.Write, FileShare.ReadWrite, 8192);
        var spindle = new SpindleFileStream(spindlePath, FileMode.Create, FileAccess.Write, FileShare.ReadWrite, 8192);
        for (int i = 0; i < 3; i++)
        {
            system.Write(data);
            spindle.Write(data);
        }
    }

    [Theory]
    [InlineData(IoEngine.Sync, 0)]
    [InlineData(IoEngine.ThreadPool, 0)]
    [InlineData(IoEngine.IoUring, 0)]
    [InlineData(IoEngine.Sync, 4096)]
    [InlineData(IoEngine.ThreadPool, 4096)]
    [InlineData(IoEngine.IoUring, 4096)]
    public Task Disposing_a_stream_with_operations_in_flight_ends_them_cleanly(IoEngine engine, int bufferSize) => Bounded(async () =>
    {
        using var dir = new TempDirectory();
        int descriptors = OpenDescriptors();
        const int Block = 16 * 1024;
        int completed = 0, refused = 0;
        for (int round = 0; round < 5; round++)
        {
            int before = Volatile.Read(ref completed);
            var stream = new SpindleFileStream(dir.File("f"), new SpindleFileOptions
            {
                Mode = FileMode.OpenOrCreate, Access = FileAccess.ReadWrite, Options = FileOptions.Asynchronous, BufferSize = bufferSize, Engine = engine,
            });
            Task[] pending = [.. Enumerable.Range(0, 32).Select(i => Task.Run(async () =>
            {
                try
                {
                    if (i % 2 == 0)
                    {
                        await stream.WriteAsync(Pattern(Block, i));
                    }
                    else
                    {
                        await stream.ReadAsync(new byte[Block]);
                    }
                    Interlocked.Increment(ref completed);
                }
                catch (ObjectDisposedException)
                {
                    Interlocked.Increment(ref refused);
                }
            }))];
            // Dispose after a few of this round's operations completed (none in round 0): the rest are queued or running.
            await UntilAsync(() => Volatile.Read(ref completed) >= before + round * 6, 5000);
            await stream.DisposeAsync();
            await Task.WhenAll(pending);
        }
        AssertNoDescriptorLeak(descriptors);
        output.WriteLine($"{engine}, buffer {bufferSize}: {completed} operations completed, {refused} refused after dispose");
    });
}
