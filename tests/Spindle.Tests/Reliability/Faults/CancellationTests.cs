using Microsoft.Win32.SafeHandles;
using Spindle.Tests.Infrastructure;
using Xunit.Abstractions;
using static Spindle.Tests.Reliability.ReliabilityKit;

namespace Spindle.Tests.Reliability.Faults;

/// <summary>
/// Cancellation at every point of an operation's life, on every engine: each operation either completes (a write
/// then is on disk) or ends cancelled, nothing hangs, and no buffer is written after its operation has completed.
/// </summary>
[Collection(SerialReliability.Name)]
public class CancellationTests(ITestOutputHelper output)
{
    [Theory]
    [InlineData(IoEngine.Sync)]
    [InlineData(IoEngine.ThreadPool)]
    [InlineData(IoEngine.IoUring)]
    [InlineData(IoEngine.Auto)]
    public Task Cancelling_at_random_points_leaves_acknowledged_writes_on_disk_and_buffers_untouched_afterwards(IoEngine engine) => Bounded(async () =>
    {
        using var dir = new TempDirectory();
        const int Count = 128;
        const int Block = 64 * 1024;
        byte[] data = Pattern(Count * Block, 13);
        File.WriteAllBytes(dir.File("source"), data);
        int descriptors = OpenDescriptors();
        int completed = 0, cancelled = 0;
        var random = new Random(17);
        bool[] written = new bool[Count];
        var readBuffers = new byte[Count][];

        using (SafeFileHandle source = SpindleFile.OpenHandle(dir.File("source"), FileMode.Open, FileAccess.Read, FileShare.Read, FileOptions.Asynchronous))
        using (SafeFileHandle target = SpindleFile.OpenHandle(dir.File("target"), FileMode.Create, FileAccess.ReadWrite, FileShare.None, FileOptions.Asynchronous))
        {
            var tasks = new Task[Count * 2];
            var sources = new CancellationTokenSource[Count];
            for (int i = 0; i < Count; i++)
            {
                int index = i;
                sources[i] = new CancellationTokenSource();
                CancellationToken token = sources[i].Token;
                readBuffers[i] = new byte[Block];
                tasks[2 * i] = Run(async () => written[index] = await Completes(SpindleRandomAccess.WriteAsync(target, data.AsMemory(index * Block, Block), (long)index * Block, engine, token)));
                tasks[2 * i + 1] = Run(async () =>
                {
                    if (await CompletesRead(SpindleRandomAccess.ReadAsync(source, readBuffers[index], (long)index * Block, engine, token)))
                    {
                        Assert.True(readBuffers[index].AsSpan().SequenceEqual(data.AsSpan(index * Block, Block)), $"read {index} returned wrong bytes");
                    }
                    // After completion (either way) the buffer is ours: mark it and see later that nothing writes into it.
                    readBuffers[index].AsSpan().Fill(0xEE);
                });
                // Cancel some before they start, some right away, some a little later, some never.
                switch (random.Next(4))
                {
                    case 0: sources[i].Cancel(); break;
                    case 1: _ = Task.Run(sources[i].Cancel); break;
                    case 2: sources[i].CancelAfter(random.Next(0, 3)); break;
                }
            }
            await Task.WhenAll(tasks);
            await Task.Delay(50); // a late kernel write into a completed read's buffer would show up now
            Assert.All(readBuffers, buffer => Assert.True(Array.TrueForAll(buffer, b => b == 0xEE), "a buffer was written after its read completed"));
            foreach (CancellationTokenSource s in sources)
            {
                s.Dispose();
            }
        }

        byte[] disk = File.ReadAllBytes(dir.File("target"));
        for (int i = 0; i < Count; i++)
        {
            if (written[i])
            {
                Assert.True(disk.AsSpan(i * Block, Block).SequenceEqual(data.AsSpan(i * Block, Block)), $"acknowledged write {i} is not on disk");
            }
        }
        AssertNoDescriptorLeak(descriptors);
        output.WriteLine($"{engine}: {completed} operations completed, {cancelled} cancelled");

        Task Run(Func<Task> body) => Task.Run(body);

        async Task<bool> Completes(ValueTask pending)
        {
            try
            {
                await pending;
                Interlocked.Increment(ref completed);
                return true;
            }
            catch (OperationCanceledException)
            {
                Interlocked.Increment(ref cancelled);
                return false;
            }
        }

        async Task<bool> CompletesRead(ValueTask<int> pending) => await Completes(new ValueTask(pending.AsTask()));
    });
}
