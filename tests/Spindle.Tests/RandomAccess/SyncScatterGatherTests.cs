using Microsoft.Win32.SafeHandles;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.RandomAccess;

/// <summary>Scatter/gather with more buffers than IOV_MAX (1024), odd sizes and empty buffers, against System.IO.</summary>
public class SyncScatterGatherTests
{
    private static List<byte[]> Buffers(int count, int seed)
    {
        var random = new Random(seed);
        var buffers = new List<byte[]>(count);
        for (int i = 0; i < count; i++)
        {
            // Every seventh buffer is empty; the others have 1..700 bytes.
            var buffer = new byte[i % 7 == 3 ? 0 : random.Next(1, 700)];
            random.NextBytes(buffer);
            buffers.Add(buffer);
        }
        return buffers;
    }

    [Theory]
    [InlineData(1)]
    [InlineData(32)]
    [InlineData(33)]
    [InlineData(1024)]
    [InlineData(1025)]
    [InlineData(3000)]
    public void Gather_write_and_scatter_read_match_System_IO(int count)
    {
        using var directory = new TempDirectory();
        List<byte[]> buffers = Buffers(count, count);
        byte[] expected = buffers.SelectMany(b => b).ToArray();
        const long offset = 12345;

        string[] results = new string[2];
        byte[][] disk = new byte[2][];
        foreach ((int index, RandomAccessApi api) in new[] { (0, RandomAccessApi.SystemIo), (1, RandomAccessApi.Spindle) })
        {
            string path = directory.File(api.Name);
            using (SafeFileHandle handle = api.Open(path, FileMode.CreateNew, FileAccess.ReadWrite))
            {
                api.Write(handle, buffers.Select(b => (ReadOnlyMemory<byte>)b).ToArray(), offset);
                // Read back into differently cut buffers; the count read is compared too.
                List<byte[]> targets = Buffers(count, count + 1).Select(b => new byte[b.Length]).ToList();
                long read = api.Read(handle, targets.Select(b => (Memory<byte>)b).ToArray(), offset);
                byte[] got = targets.SelectMany(b => b).Take((int)read).ToArray();
                Assert.Equal(expected.AsSpan(0, (int)read).ToArray(), got);
                results[index] = $"read={read} length={api.GetLength(handle)}";
            }
            disk[index] = File.ReadAllBytes(path);
        }
        Assert.Equal(results[0], results[1]);
        Assert.Equal(disk[0], disk[1]);
        Assert.Equal(expected, disk[1].AsSpan((int)offset).ToArray());
    }

    [Fact]
    public void Scatter_read_on_a_System_IO_handle_and_gather_write_on_a_Spindle_handle_cross_over()
    {
        using var directory = new TempDirectory();
        string path = directory.File("x");
        List<byte[]> buffers = Buffers(2000, 7);
        using (SafeFileHandle spindle = SpindleFile.OpenHandle(path, FileMode.CreateNew, FileAccess.Write))
        {
            System.IO.RandomAccess.Write(spindle, buffers.Select(b => (ReadOnlyMemory<byte>)b).ToArray(), 0);
        }
        using SafeFileHandle system = File.OpenHandle(path);
        var targets = buffers.Select(b => new byte[b.Length]).ToArray();
        long read = SpindleRandomAccess.Read(system, targets.Select(b => (Memory<byte>)b).ToArray(), 0);
        Assert.Equal(buffers.Take(1024).Sum(b => b.Length), read);
        Assert.Equal(buffers.Take(1024).SelectMany(b => b), targets.Take(1024).SelectMany(b => b));
    }
}
