using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Tests.Infrastructure;
using Xunit.Abstractions;
using static Spindle.Tests.Reliability.ReliabilityKit;

namespace Spindle.Tests.Reliability.Lifetime;

/// <summary>Handles disposed under running operations, forgotten handles, and long open/close loops.</summary>
[Collection(SerialReliability.Name)]
public class HandleLifetimeTests(ITestOutputHelper output)
{
    [Theory]
    [MemberData(nameof(WayData), MemberType = typeof(ReliabilityKit))]
    public Task Disposing_a_handle_with_operations_in_flight_fails_them_cleanly_and_keeps_acknowledged_writes(string way) => Bounded(async () =>
    {
        IoEngine? engine = ParseWay(way);
        using var dir = new TempDirectory();
        int descriptors = OpenDescriptors();
        const int Operations = 96;
        const int Block = 64 * 1024;
        byte[][] blocks = Enumerable.Range(0, Operations).Select(i => Pattern(Block, i)).ToArray();
        bool[] acknowledged = new bool[Operations];
        int disposedErrors = 0;

        for (int round = 0; round < 4; round++)
        {
            SafeFileHandle handle = SpindleFile.OpenHandle(dir.File("f"), FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.ReadWrite);
            var pending = new Task[Operations];
            for (int i = 0; i < Operations; i++)
            {
                int index = i;
                pending[i] = Task.Run(async () =>
                {
                    try
                    {
                        if (index % 3 == 2)
                        {
                            await ReadAsyncOrSync(handle, new byte[Block], (long)index * Block, engine);
                        }
                        else
                        {
                            await WriteAsyncOrSync(handle, blocks[index], (long)index * Block, engine);
                            acknowledged[index] = true;
                        }
                    }
                    catch (ObjectDisposedException)
                    {
                        Interlocked.Increment(ref disposedErrors);
                    }
                });
                if (i == Operations / 2 + round * 10)
                {
                    handle.Dispose(); // while the others are queued or running
                }
            }
            await Task.WhenAll(pending); // anything but ObjectDisposedException fails the test here
            handle.Dispose();
        }

        byte[] disk = File.ReadAllBytes(dir.File("f"));
        for (int i = 0; i < Operations; i++)
        {
            if (acknowledged[i])
            {
                Assert.True(disk.AsSpan(i * Block, Block).SequenceEqual(blocks[i]), $"acknowledged write {i} is not on disk");
            }
        }
        AssertNoDescriptorLeak(descriptors);
        output.WriteLine($"{way}: {acknowledged.Count(a => a)} writes acknowledged, {disposedErrors} operations saw the closed handle");
    });

    [Theory]
    [MemberData(nameof(WayData), MemberType = typeof(ReliabilityKit))]
    public Task Many_open_close_cycles_do_not_grow_descriptors_or_memory(string way) => Bounded(async () =>
    {
        IoEngine? engine = ParseWay(way);
        using var dir = new TempDirectory();
        byte[] data = Pattern(4096, 9);
        var read = new byte[4096];

        async Task Cycles(int count)
        {
            for (int i = 0; i < count; i++)
            {
                using SafeFileHandle handle = SpindleFile.OpenHandle(dir.File("f"), FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.None,
                    i % 2 == 0 ? FileOptions.Asynchronous : FileOptions.None);
                await WriteAsyncOrSync(handle, data, i % 8 * 512, engine);
                await ReadAsyncOrSync(handle, read, 0, engine);
            }
        }

        await Cycles(500); // warm up pools and caches
        int descriptors = OpenDescriptors();
        long memory = GC.GetTotalMemory(forceFullCollection: true);
        await Cycles(3000);
        long grown = GC.GetTotalMemory(forceFullCollection: true) - memory;
        AssertNoDescriptorLeak(descriptors);
        Assert.True(grown < 2 * 1024 * 1024, $"managed memory grew by {grown} bytes over 3000 open/close cycles");
        output.WriteLine($"{way}: 3000 cycles, managed memory change {grown} bytes");
    });

    [Fact]
    public Task A_forgotten_handle_is_closed_by_its_finalizer() => Bounded(() =>
    {
        using var dir = new TempDirectory();
        int descriptors = OpenDescriptors();
        OpenAndForget(dir.File("f"), 50);
        AssertNoDescriptorLeak(descriptors);
        // The flock taken by the forgotten handles is gone too: an exclusive open succeeds.
        using SafeFileHandle exclusive = SpindleFile.OpenHandle(dir.File("f"), FileMode.Open, FileAccess.ReadWrite, FileShare.None);
        return Task.CompletedTask;
    });

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void OpenAndForget(string path, int count)
    {
        for (int i = 0; i < count; i++)
        {
            SafeFileHandle handle = SpindleFile.OpenHandle(path, FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.Read);
            SpindleRandomAccess.Write(handle, new byte[] { (byte)i }, i);
        }
    }
}
