using Spindle.Tests.Infrastructure;
using Xunit.Abstractions;

namespace Spindle.Tests.Beyond;

/// <summary>
/// A buffered <see cref="SpindleFileStream"/> over an O_DIRECT handle, run beside System.IO's
/// <see cref="FileStream"/> with odd sizes and offsets: same results, same bytes on disk. Any misaligned
/// request reaching the kernel would fail with EINVAL, so passing also shows that only aligned I/O was done.
/// </summary>
public class DirectStreamTests
{
    private readonly ITestOutputHelper _output;

    public DirectStreamTests(ITestOutputHelper output) => _output = output;

    private static SpindleFileStream OpenDirect(string path, int bufferSize, bool async = false) => new(path, new SpindleFileOptions
    {
        Mode = FileMode.OpenOrCreate,
        Access = FileAccess.ReadWrite,
        BufferSize = bufferSize,
        DirectIO = true,
        Options = async ? FileOptions.Asynchronous : FileOptions.None,
    });

    [Theory]
    [InlineData(0, 1)]
    [InlineData(1, 2)]
    [InlineData(4096, 3)]
    [InlineData(10_000, 4)]
    [InlineData(65536, 5)]
    public void Random_operations_match_FileStream_with_odd_sizes_and_offsets(int bufferSize, int seed)
    {
        using var dir = DirectIOTests.DiskDirectory();
        var random = new Random(seed);
        using (var system = new FileStream(dir.File("system"), FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.Read, Math.Max(bufferSize, 1)))
        using (SpindleFileStream spindle = OpenDirect(dir.File("spindle"), bufferSize))
        {
            for (int step = 0; step < 400; step++)
            {
                string op = Step(random, system, spindle, sync: true);
                Assert.True(system.Position == spindle.Position, $"step {step} ({op}): position {spindle.Position}, expected {system.Position}");
                Assert.True(system.Length == spindle.Length, $"step {step} ({op}): length {spindle.Length}, expected {system.Length}");
            }
        }
        AssertSameFiles(dir.File("system"), dir.File("spindle"));
    }

    [Theory]
    [InlineData(4096, 11)]
    [InlineData(1, 12)]
    public async Task Random_async_operations_match_FileStream(int bufferSize, int seed)
    {
        using var dir = DirectIOTests.DiskDirectory();
        var random = new Random(seed);
        await using (var system = new FileStream(dir.File("system"), FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.Read, Math.Max(bufferSize, 1), useAsync: true))
        await using (SpindleFileStream spindle = OpenDirect(dir.File("spindle"), bufferSize, async: true))
        {
            for (int step = 0; step < 200; step++)
            {
                string op = await StepAsync(random, system, spindle);
                Assert.True(system.Position == spindle.Position, $"step {step} ({op}): position {spindle.Position}, expected {system.Position}");
                Assert.True(system.Length == spindle.Length, $"step {step} ({op}): length {spindle.Length}, expected {system.Length}");
            }
        }
        AssertSameFiles(dir.File("system"), dir.File("spindle"));
    }

    [Theory]
    [InlineData(1)]
    [InlineData(511)]
    [InlineData(4097)]
    [InlineData(100_003)]
    public void A_file_whose_length_is_not_a_multiple_of_the_alignment_is_written_and_read_exactly(int length)
    {
        using var dir = DirectIOTests.DiskDirectory();
        byte[] data = CopyTests.RandomBytes(length, length);
        string path = dir.File("tail");
        using (SpindleFileStream stream = OpenDirect(path, 4096))
        {
            stream.Write(data, 0, data.Length / 3);
            stream.Write(data, data.Length / 3, data.Length - data.Length / 3);
        }
        Assert.Equal(data, File.ReadAllBytes(path));

        using (SpindleFileStream stream = OpenDirect(path, 4096))
        {
            Assert.True(SpindleFile.IsDirectIO(stream.SafeFileHandle));
            byte[] back = new byte[length + 10];
            int total = 0, read;
            while ((read = stream.Read(back, total, back.Length - total)) > 0)
            {
                total += read;
            }
            Assert.Equal(length, total);
            Assert.Equal(data, back[..length]);
            // Appending after the odd tail keeps the bytes before it.
            stream.Write([1, 2, 3]);
        }
        Assert.Equal([.. data, 1, 2, 3], File.ReadAllBytes(path));
    }

    [Fact]
    public void A_write_only_stream_changes_part_of_a_block_without_losing_the_rest()
    {
        using var dir = DirectIOTests.DiskDirectory();
        string path = dir.File("existing");
        byte[] data = CopyTests.RandomBytes(20_000, 8);
        File.WriteAllBytes(path, data);
        using (var stream = new SpindleFileStream(path, new SpindleFileOptions
        {
            Mode = FileMode.Open, Access = FileAccess.Write, BufferSize = 4096, DirectIO = true,
        }))
        {
            stream.Position = 1000;
            stream.Write([1, 2, 3]);
            stream.Seek(-5, SeekOrigin.End);
            stream.Write(new byte[10]);
        }
        data[1000] = 1;
        data[1001] = 2;
        data[1002] = 3;
        byte[] expected = [.. data[..19_995], .. new byte[10]];
        Assert.Equal(expected, File.ReadAllBytes(path));
    }

    [Fact]
    public void FileMode_Append_on_a_direct_stream_appends_after_an_odd_length()
    {
        using var dir = DirectIOTests.DiskDirectory();
        string path = dir.File("log");
        File.WriteAllText(path, "first line\n");
        for (int i = 0; i < 3; i++)
        {
            using var stream = new SpindleFileStream(path, new SpindleFileOptions { Mode = FileMode.Append, Access = FileAccess.Write, DirectIO = true });
            Assert.True(SpindleFile.IsDirectIO(stream.SafeFileHandle));
            stream.Write(System.Text.Encoding.ASCII.GetBytes($"line {i}\n"));
        }
        Assert.Equal("first line\nline 0\nline 1\nline 2\n", File.ReadAllText(path));
    }

    [Fact]
    public void A_stream_over_an_O_DIRECT_handle_opened_elsewhere_still_does_aligned_IO()
    {
        using var dir = DirectIOTests.DiskDirectory();
        string path = dir.File("foreign");
        // System.IO cannot ask for O_DIRECT; set it on its handle afterwards, as native code might.
        using var handle = File.OpenHandle(path, FileMode.Create, FileAccess.ReadWrite);
        int fd = (int)handle.DangerousGetHandle();
        int flags = Spindle.Interop.Libc.Fcntl(fd, Spindle.Interop.LinuxConstants.F_GETFL, 0);
        Assert.Equal(0, Spindle.Interop.Libc.Fcntl(fd, Spindle.Interop.LinuxConstants.F_SETFL, flags | Spindle.Interop.OpenFlags.O_DIRECT));
        Assert.True(SpindleFile.IsDirectIO(handle));

        byte[] data = CopyTests.RandomBytes(7777, 77);
        using (var stream = new SpindleFileStream(handle, FileAccess.ReadWrite, bufferSize: 4096))
        {
            stream.Write(data, 0, 1000);
            stream.Write(data, 1000, 6777);
            stream.Position = 3;
            byte[] back = new byte[100];
            stream.ReadExactly(back);
            Assert.Equal(data[3..103], back);
        }
        Assert.Equal(data, File.ReadAllBytes(path));
    }

    private static string Step(Random random, FileStream system, SpindleFileStream spindle, bool sync)
    {
        int choice = random.Next(100);
        if (choice < 40)
        {
            byte[] data = CopyTests.RandomBytes(random.Next(1, 12_000), random.Next());
            system.Write(data);
            spindle.Write(data);
            return $"write {data.Length}";
        }
        if (choice < 70)
        {
            int count = random.Next(0, 12_000);
            byte[] a = new byte[count], b = new byte[count];
            int ra = ReadFully(system, a), rb = ReadFully(spindle, b);
            Assert.Equal(ra, rb);
            Assert.Equal(a, b);
            return $"read {count}";
        }
        if (choice < 88)
        {
            long target = random.Next(0, (int)system.Length + 5000);
            system.Seek(target, SeekOrigin.Begin);
            spindle.Seek(target, SeekOrigin.Begin);
            return $"seek {target}";
        }
        if (choice < 93)
        {
            long offset = -random.Next(0, (int)Math.Min(system.Length, 3000) + 1);
            Assert.Equal(system.Seek(offset, SeekOrigin.End), spindle.Seek(offset, SeekOrigin.End));
            return $"seek end {offset}";
        }
        if (choice < 96)
        {
            long length = random.Next(0, (int)system.Length + 3000);
            system.SetLength(length);
            spindle.SetLength(length);
            return $"setlength {length}";
        }
        if (choice < 98)
        {
            int value = random.Next(256);
            system.WriteByte((byte)value);
            spindle.WriteByte((byte)value);
            Assert.Equal(system.ReadByte(), spindle.ReadByte());
            return "byte";
        }
        system.Flush();
        spindle.Flush();
        return "flush";
    }

    private static async Task<string> StepAsync(Random random, FileStream system, SpindleFileStream spindle)
    {
        int choice = random.Next(100);
        if (choice < 45)
        {
            byte[] data = CopyTests.RandomBytes(random.Next(1, 12_000), random.Next());
            await system.WriteAsync(data);
            await spindle.WriteAsync(data);
            return $"write {data.Length}";
        }
        if (choice < 80)
        {
            int count = random.Next(0, 12_000);
            byte[] a = new byte[count], b = new byte[count];
            int ra = await system.ReadAtLeastAsync(a, count, throwOnEndOfStream: false);
            int rb = await spindle.ReadAtLeastAsync(b, count, throwOnEndOfStream: false);
            Assert.Equal(ra, rb);
            Assert.Equal(a, b);
            return $"read {count}";
        }
        if (choice < 95)
        {
            long target = random.Next(0, (int)system.Length + 5000);
            system.Position = target;
            spindle.Position = target;
            return $"position {target}";
        }
        await system.FlushAsync();
        await spindle.FlushAsync();
        return "flush";
    }

    private static int ReadFully(Stream stream, byte[] buffer) => stream.ReadAtLeast(buffer, buffer.Length, throwOnEndOfStream: false);

    private void AssertSameFiles(string expected, string actual)
    {
        byte[] a = File.ReadAllBytes(expected), b = File.ReadAllBytes(actual);
        _output.WriteLine($"final length {a.Length}");
        Assert.Equal(a.Length, b.Length);
        Assert.True(a.AsSpan().SequenceEqual(b), "the files differ");
    }
}
