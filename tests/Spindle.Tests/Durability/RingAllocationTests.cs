using System.Buffers;
using Microsoft.Win32.SafeHandles;
using Spindle.Engines.FastPath;
using Spindle.Engines.IoUring;
using Spindle.Tests.Engines;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Durability;

/// <summary>Batches, data syncs and durable writes on the ring allocate nothing in steady state.</summary>
[Collection(SerialCollection.Name)]
public class RingAllocationTests
{
    // Any per-operation allocation costs at least 24 bytes; a rare runtime-internal one is allowed for.
    private const double AllowedBytesPerOperation = 8;

    // On a pool thread without xunit's SynchronizationContext, best of three rounds (as EngineAllocationTests).
    private static Task<double> BytesPerOperation(int operations, Func<int, ValueTask> operation) => Task.Run(async () =>
    {
        for (int i = 0; i < operations; i++)
        {
            await operation(i);
        }
        double best = double.MaxValue;
        for (int round = 0; round < 3; round++)
        {
            long before = GC.GetTotalAllocatedBytes(precise: true);
            for (int i = 0; i < operations; i++)
            {
                await operation(i);
            }
            best = Math.Min(best, (GC.GetTotalAllocatedBytes(precise: true) - before) / (double)operations);
        }
        return best;
    });

    [Fact]
    public async Task A_batch_of_reads_on_the_ring_allocates_nothing_per_batch()
    {
        if (!EngineCases.ReportIoUring(IoEngine.IoUring))
        {
            return;
        }
        using var dir = new TempDirectory(AppContext.BaseDirectory);
        string path = dir.File("direct");
        File.WriteAllBytes(path, new byte[1 << 20]);
        using SafeFileHandle handle = SpindleFile.OpenHandle(path, new SpindleFileOptions { Mode = FileMode.Open, Access = FileAccess.Read, DirectIO = true });
        using IMemoryOwner<byte> owner = AlignedMemoryPool.Shared.Rent(8 * 4096);
        var requests = new BatchReadRequest[8];
        for (int i = 0; i < requests.Length; i++)
        {
            requests[i] = new BatchReadRequest(handle, owner.Memory.Slice(i * 4096, 4096), i * 4096L * 3);
        }
        var results = new BatchReadResult[8];
        double bytes = await BytesPerOperation(1000, _ => SpindleRandomAccess.ReadBatchAsync(requests, results, IoEngine.IoUring));
        Console.WriteLine($"bytes per batch of 8: {bytes} (ring: {!HandleFacts.Of(handle).SynchronousBackend})");
        Assert.True(bytes < AllowedBytesPerOperation, $"a batch allocates {bytes} bytes");
    }

    [Fact]
    public async Task Data_syncs_and_durable_writes_on_the_ring_allocate_nothing_per_call()
    {
        if (!EngineCases.ReportIoUring(IoEngine.IoUring))
        {
            return;
        }
        // O_DIRECT on a disk: the router sends durable writes there to the ring (buffered files' go to the pool).
        using var dir = new TempDirectory(AppContext.BaseDirectory);
        using SafeFileHandle handle = SpindleFile.OpenHandle(dir.File("f"), new SpindleFileOptions { Mode = FileMode.Create, Access = FileAccess.ReadWrite, DirectIO = true });
        if (HandleFacts.Of(handle).SynchronousBackend)
        {
            Console.WriteLine("the test directory is on memory-backed storage: durable O_DIRECT writes run inline there.");
            return;
        }
        using IMemoryOwner<byte> owner = AlignedMemoryPool.Shared.Rent(4096);
        SpindleRandomAccess.Write(handle, owner.Memory.Span, 15 * 4096L);
        IoUringEngine engine = IoUringEngine.Instance!;
        using var overlapping = HeldFileRequest.Hold(); // lone requests on a file run on a pool thread
        long syncs = EngineCounts.Of(engine.Thread).DataSyncSqes;
        long writes = EngineCounts.Of(engine.Thread).DataSyncWriteSqes + EngineCounts.Of(engine.Thread).LinkedWriteSqes;
        double sync = await BytesPerOperation(300, _ => SpindleRandomAccess.FlushDataToDiskAsync(handle, IoEngine.IoUring));
        double write = await BytesPerOperation(300, i => SpindleRandomAccess.WriteDurableAsync(handle, owner.Memory, (i % 16) * 4096L, IoEngine.IoUring));
        Assert.True(EngineCounts.Of(engine.Thread).DataSyncSqes - syncs >= 1200 && EngineCounts.Of(engine.Thread).DataSyncWriteSqes + EngineCounts.Of(engine.Thread).LinkedWriteSqes - writes >= 1200, "the calls did not run on the ring");
        Assert.True(sync < AllowedBytesPerOperation, $"FlushDataToDiskAsync allocates {sync} bytes per call");
        Assert.True(write < AllowedBytesPerOperation, $"WriteDurableAsync allocates {write} bytes per call");
    }
}
