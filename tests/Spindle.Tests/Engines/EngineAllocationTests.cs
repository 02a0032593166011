using Microsoft.Win32.SafeHandles;
using Spindle.Engines;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Engines;

/// <summary>Steady-state operations allocate nothing, on every engine.</summary>
[Collection(SerialCollection.Name)]
public class EngineAllocationTests
{
    private const int Operations = 4000;

    // Any per-operation allocation costs at least 24 bytes; a rare runtime-internal one (a new pool
    // thread, a timer) is allowed for, a per-operation one is not.
    private const double AllowedBytesPerOperation = 4;

    // Measured on a pool thread, without xunit's SynchronizationContext (posting to it allocates), as
    // a server without one runs; the awaits are in one method so that its state machine is boxed once.
    private static Task<double> BytesPerOperation(Func<int, ValueTask> operation) => Task.Run(async () =>
    {
        for (int i = 0; i < 2000; i++)
        {
            await operation(i);
        }
        long before = GC.GetTotalAllocatedBytes(precise: true);
        for (int i = 0; i < Operations; i++)
        {
            await operation(i);
        }
        long after = GC.GetTotalAllocatedBytes(precise: true);
        return (after - before) / (double)Operations;
    });

    private static Task<double> BytesPerOperation<T>(Func<int, ValueTask<T>> operation) => Task.Run(async () =>
    {
        for (int i = 0; i < 2000; i++)
        {
            await operation(i);
        }
        long before = GC.GetTotalAllocatedBytes(precise: true);
        for (int i = 0; i < Operations; i++)
        {
            await operation(i);
        }
        long after = GC.GetTotalAllocatedBytes(precise: true);
        return (after - before) / (double)Operations;
    });

    [Theory]
    [MemberData(nameof(EngineCases.All), MemberType = typeof(EngineCases))]
    public async Task Reads_and_writes_allocate_nothing_per_operation(IoEngine engine)
    {
        EngineCases.ReportIoUring(engine);
        using var dir = new TempDirectory();
        using SafeFileHandle handle = SpindleFile.OpenHandle(dir.File("f"), FileMode.Create, FileAccess.ReadWrite);
        byte[] block = new byte[4096];
        new Random(3).NextBytes(block);
        SpindleRandomAccess.Write(handle, new byte[4096 * 64], 0);
        FileIoEngine impl = EngineCases.Resolve(engine);
        Memory<byte>[] scatter = [new byte[1000], new byte[3096]];
        ReadOnlyMemory<byte>[] gather = [block.AsMemory(0, 100), block.AsMemory(100)];

        double write = await BytesPerOperation(i => SpindleRandomAccess.WriteAsync(handle, block, (i % 64) * 4096L, engine));
        double read = await BytesPerOperation(i => impl.ReadAsync(handle, block, (i % 64) * 4096L, useFastPath: false, default));
        double fastRead = await BytesPerOperation(i => SpindleRandomAccess.ReadAsync(handle, block, (i % 64) * 4096L, engine));
        double scatterRead = await BytesPerOperation(i => SpindleRandomAccess.ReadAsync(handle, scatter, (i % 64) * 4096L, engine));
        double gatherWrite = await BytesPerOperation(i => SpindleRandomAccess.WriteAsync(handle, gather, (i % 64) * 4096L, engine));
        Console.WriteLine($"{engine}: bytes/op write {write}, read {read}, fast-path read {fastRead}, scatter {scatterRead}, gather {gatherWrite}");

        Assert.True(write < AllowedBytesPerOperation, $"WriteAsync allocates {write} bytes per operation");
        Assert.True(read < AllowedBytesPerOperation, $"ReadAsync allocates {read} bytes per operation");
        Assert.True(fastRead < AllowedBytesPerOperation, $"ReadAsync (fast path) allocates {fastRead} bytes per operation");
        Assert.True(scatterRead < AllowedBytesPerOperation, $"scatter ReadAsync allocates {scatterRead} bytes per operation");
        Assert.True(gatherWrite < AllowedBytesPerOperation, $"gather WriteAsync allocates {gatherWrite} bytes per operation");
    }
}
