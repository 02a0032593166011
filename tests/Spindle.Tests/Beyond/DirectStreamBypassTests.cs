using System.Buffers;
using Spindle.Diagnostics;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Beyond;

/// <summary>
/// A direct stream hands a large aligned write straight to the kernel, as FileStream bypasses its buffer for
/// requests at least as large as it: one system call per write, not one per window, with the same bytes and
/// positions as FileStream.
/// </summary>
[Collection(MeterCollection.Name)]
public class DirectStreamBypassTests
{
    private const int MiB = 1 << 20;

    private static long Operations => SpindleTotals.Snapshot().Operations;

    private static SpindleFileStream OpenDirect(string path, int bufferSize, bool async) => new(path, new SpindleFileOptions
    {
        Mode = FileMode.OpenOrCreate,
        Access = FileAccess.ReadWrite,
        BufferSize = bufferSize,
        DirectIO = true,
        Options = async ? FileOptions.Asynchronous : FileOptions.None,
    });

    [Theory]
    [InlineData(4096, true)]
    [InlineData(4096, false)]
    [InlineData(0, true)]
    [InlineData(0, false)]
    public async Task Sixteen_aligned_1_MiB_writes_are_sixteen_system_calls(int bufferSize, bool async)
    {
        using var dir = DirectIOTests.DiskDirectory();
        using IMemoryOwner<byte> buffer = AlignedMemoryPool.Shared.Rent(MiB);
        Memory<byte> block = buffer.Memory[..MiB];
        await using (SpindleFileStream stream = OpenDirect(dir.File("big"), bufferSize, async))
        {
            Assert.True(SpindleFile.IsDirectIO(stream.SafeFileHandle));
            long before = Operations;
            for (int i = 0; i < 16; i++)
            {
                block.Span.Fill((byte)i);
                if (async)
                {
                    await stream.WriteAsync(block);
                }
                else
                {
                    stream.Write(block.Span);
                }
            }
            await stream.FlushAsync();
            // The window (64 KiB here) would have split each write into 16: 256 calls.
            Assert.Equal(16, Operations - before);
            Assert.Equal(16 * MiB, stream.Position);
        }
        byte[] file = File.ReadAllBytes(dir.File("big"));
        Assert.Equal(16 * MiB, file.Length);
        for (int i = 0; i < 16; i++)
        {
            Assert.True(file.AsSpan(i * MiB, MiB).IndexOfAnyExcept((byte)i) < 0, $"block {i}");
        }
    }

    [Theory]
    [InlineData(4096, 21, false)]
    [InlineData(0, 22, false)]
    [InlineData(4096, 23, true)]
    [InlineData(100_000, 24, true)]
    public async Task Large_aligned_and_unaligned_writes_mixed_with_small_ones_match_FileStream(int bufferSize, int seed, bool async)
    {
        using var dir = DirectIOTests.DiskDirectory();
        var random = new Random(seed);
        using IMemoryOwner<byte> aligned = AlignedMemoryPool.Shared.Rent(3 * MiB);
        await using (var system = new FileStream(dir.File("system"), FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.Read, Math.Max(bufferSize, 1), async))
        await using (SpindleFileStream spindle = OpenDirect(dir.File("spindle"), bufferSize, async))
        {
            for (int step = 0; step < 120; step++)
            {
                int choice = random.Next(100);
                string op;
                if (choice < 45)
                {
                    // Large: aligned memory, sometimes at an offset into it (misaligned address), any length.
                    int skew = random.Next(4) == 0 ? random.Next(1, 4096) : 0;
                    int length = random.Next(4) == 0 ? random.Next(64 << 10, 3 * MiB - skew) : (random.Next(1, 12) << 16);
                    Memory<byte> data = aligned.Memory.Slice(skew, length);
                    random.NextBytes(data.Span);
                    await Write(system, data, async);
                    await Write(spindle, data, async);
                    op = $"write {length} at skew {skew}";
                }
                else if (choice < 65)
                {
                    byte[] data = new byte[random.Next(1, 9000)];
                    random.NextBytes(data);
                    await Write(system, data, async);
                    await Write(spindle, data, async);
                    op = $"small write {data.Length}";
                }
                else if (choice < 80)
                {
                    int count = random.Next(0, 200_000);
                    byte[] a = new byte[count], b = new byte[count];
                    int ra = await ReadFully(system, a, async), rb = await ReadFully(spindle, b, async);
                    Assert.Equal(ra, rb);
                    Assert.True(a.AsSpan().SequenceEqual(b), $"step {step}: read {count} differs");
                    op = $"read {count}";
                }
                else
                {
                    // Seek to a block boundary most of the time, so that large writes start aligned.
                    long target = random.Next(3) == 0 ? random.Next(0, (int)system.Length + 5000) : random.Next(0, (int)(system.Length / 4096) + 2) * 4096L;
                    system.Seek(target, SeekOrigin.Begin);
                    spindle.Seek(target, SeekOrigin.Begin);
                    op = $"seek {target}";
                }
                Assert.True(system.Position == spindle.Position, $"step {step} ({op}): position {spindle.Position}, expected {system.Position}");
                Assert.True(system.Length == spindle.Length, $"step {step} ({op}): length {spindle.Length}, expected {system.Length}");
            }
        }
        byte[] expected = File.ReadAllBytes(dir.File("system")), actual = File.ReadAllBytes(dir.File("spindle"));
        Assert.Equal(expected.Length, actual.Length);
        Assert.True(expected.AsSpan().SequenceEqual(actual), "the files differ");
    }

    private static async Task Write(Stream stream, ReadOnlyMemory<byte> data, bool async)
    {
        if (async)
        {
            await stream.WriteAsync(data);
        }
        else
        {
            stream.Write(data.Span);
        }
    }

    private static async Task<int> ReadFully(Stream stream, byte[] buffer, bool async)
    {
        int total = 0, read;
        while (total < buffer.Length && (read = async ? await stream.ReadAsync(buffer.AsMemory(total)) : stream.Read(buffer, total, buffer.Length - total)) > 0)
        {
            total += read;
        }
        return total;
    }
}
