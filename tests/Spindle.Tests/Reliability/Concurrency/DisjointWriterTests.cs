using Microsoft.Win32.SafeHandles;
using Spindle.Tests.Infrastructure;
using static Spindle.Tests.Reliability.ReliabilityKit;

namespace Spindle.Tests.Reliability.Concurrency;

/// <summary>Many writers on one handle, each in its own regions: nothing is lost and nothing is torn.</summary>
public class DisjointWriterTests
{
    [Theory]
    [MemberData(nameof(WayData), MemberType = typeof(ReliabilityKit))]
    public Task Many_threads_writing_disjoint_regions_lose_nothing(string way) => Bounded(async () =>
    {
        IoEngine? engine = ParseWay(way);
        using var dir = new TempDirectory();
        const int Threads = 16;
        const int WritesPerThread = 100;
        const int Stripe = 4096 + 512; // unaligned stripes, so neighbours share pages
        byte[] expected = new byte[Threads * WritesPerThread * Stripe];
        new Random(11).NextBytes(expected);

        using (SafeFileHandle handle = SpindleFile.OpenHandle(dir.File("f"), FileMode.Create, FileAccess.ReadWrite, FileShare.None, FileOptions.Asynchronous))
        {
            // Thread t owns stripes t, t + Threads, t + 2 * Threads...; each stripe is written in random pieces, in random order.
            Task[] writers = Enumerable.Range(0, Threads).Select(t => Task.Factory.StartNew(async () =>
            {
                var random = new Random(t);
                for (int w = 0; w < WritesPerThread; w++)
                {
                    int stripe = w * Threads + t;
                    int split = random.Next(0, Stripe + 1);
                    long at = (long)stripe * Stripe;
                    if (random.Next(2) == 0)
                    {
                        await WriteAsyncOrSync(handle, expected.AsMemory((int)at + split, Stripe - split), at + split, engine);
                        await WriteAsyncOrSync(handle, expected.AsMemory((int)at, split), at, engine);
                    }
                    else
                    {
                        await WriteGatherAsyncOrSync(handle, [expected.AsMemory((int)at, split), expected.AsMemory((int)at + split, Stripe - split)], at, engine);
                    }
                }
            }, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default).Unwrap()).ToArray();
            await Task.WhenAll(writers);
        }
        Assert.True(expected.AsSpan().SequenceEqual(File.ReadAllBytes(dir.File("f"))), "the file differs from what the writers wrote");
    });

    [Theory]
    [MemberData(nameof(WayData), MemberType = typeof(ReliabilityKit))]
    public Task Hundreds_of_operations_in_flight_on_one_engine_complete_with_the_right_bytes(string way) => Bounded(async () =>
    {
        IoEngine? engine = ParseWay(way);
        using var dir = new TempDirectory();
        const int InFlight = 512;
        const int Block = 4096;
        byte[] expected = Pattern(InFlight * Block, 12);
        using SafeFileHandle handle = SpindleFile.OpenHandle(dir.File("f"), FileMode.Create, FileAccess.ReadWrite, FileShare.None, FileOptions.Asynchronous);

        await Task.WhenAll(Enumerable.Range(0, InFlight).Select(i => WriteAsyncOrSync(handle, expected.AsMemory(i * Block, Block), (long)i * Block, engine)));

        byte[] actual = new byte[expected.Length];
        int[] counts = await Task.WhenAll(Enumerable.Range(0, InFlight).Reverse().Select(i => ReadAsyncOrSync(handle, actual.AsMemory(i * Block, Block), (long)i * Block, engine)));
        Assert.All(counts, n => Assert.Equal(Block, n));
        Assert.True(expected.AsSpan().SequenceEqual(actual), "a read returned the wrong bytes");
    });
}
