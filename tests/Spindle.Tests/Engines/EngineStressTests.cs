using Microsoft.Win32.SafeHandles;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Engines;

/// <summary>Many concurrent reads and writes over disjoint regions, every byte verified.</summary>
public class EngineStressTests
{
    private const int BlockSize = 4096;
    private const int Blocks = 10_000; // 10,000 writes then 10,000 reads per engine
    private const int Workers = 64;

    private static byte Pattern(int block, int i) => (byte)(block * 31 + i * 7 + (block >> 8));

    [Theory]
    [MemberData(nameof(EngineCases.All), MemberType = typeof(EngineCases))]
    public async Task Concurrent_reads_and_writes_over_disjoint_regions_keep_every_byte(IoEngine engine)
    {
        EngineCases.ReportIoUring(engine);
        using var dir = new TempDirectory();
        string path = dir.File("stress");
        using (SafeFileHandle handle = SpindleFile.OpenHandle(path, FileMode.Create, FileAccess.ReadWrite))
        {
            var engineImpl = EngineCases.Resolve(engine);

            // Writes: single buffers and two-part gathers, from many tasks at once.
            await Task.WhenAll(Enumerable.Range(0, Workers).Select(worker => Task.Run(async () =>
            {
                byte[] block = new byte[BlockSize];
                for (int b = worker; b < Blocks; b += Workers)
                {
                    for (int i = 0; i < BlockSize; i++)
                    {
                        block[i] = Pattern(b, i);
                    }
                    if (b % 2 == 0)
                    {
                        await SpindleRandomAccess.WriteAsync(handle, block, (long)b * BlockSize, engine);
                    }
                    else
                    {
                        await SpindleRandomAccess.WriteAsync(handle, new ReadOnlyMemory<byte>[] { block.AsMemory(0, 1000), block.AsMemory(1000) }, (long)b * BlockSize, engine);
                    }
                }
            }))).WaitAsync(TimeSpan.FromSeconds(60));

            // Reads: through the engine itself (no fast path), the public path, and scatter reads.
            int mismatches = 0;
            await Task.WhenAll(Enumerable.Range(0, Workers).Select(worker => Task.Run(async () =>
            {
                byte[] block = new byte[BlockSize];
                for (int b = worker; b < Blocks; b += Workers)
                {
                    long offset = (long)b * BlockSize;
                    Array.Clear(block);
                    long n = (b % 3) switch
                    {
                        0 => await engineImpl.ReadAsync(handle, block, offset, useFastPath: false, default),
                        1 => await SpindleRandomAccess.ReadAsync(handle, block, offset, engine),
                        _ => await SpindleRandomAccess.ReadAsync(handle, new Memory<byte>[] { block.AsMemory(0, 3000), block.AsMemory(3000) }, offset, engine),
                    };
                    bool ok = n == BlockSize;
                    for (int i = 0; ok && i < BlockSize; i++)
                    {
                        ok = block[i] == Pattern(b, i);
                    }
                    if (!ok)
                    {
                        Interlocked.Increment(ref mismatches);
                    }
                }
            }))).WaitAsync(TimeSpan.FromSeconds(60));
            Assert.Equal(0, mismatches);
        }

        // And what is on disk, read by System.IO.
        byte[] all = File.ReadAllBytes(path);
        Assert.Equal((long)Blocks * BlockSize, all.Length);
        for (int b = 0; b < Blocks; b++)
        {
            for (int i = 0; i < BlockSize; i++)
            {
                if (all[b * BlockSize + i] != Pattern(b, i))
                {
                    Assert.Fail($"byte {i} of block {b} differs");
                }
            }
        }
    }
}
