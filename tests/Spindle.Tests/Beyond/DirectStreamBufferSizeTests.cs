using Spindle.Tests.Infrastructure;
using Xunit.Abstractions;

namespace Spindle.Tests.Beyond;

/// <summary>
/// A <see cref="SpindleFileStream"/> with <see cref="SpindleFileOptions.DirectIO"/> must accept any buffer size
/// (below the alignment, not a multiple of it, 0 and 1 for "unbuffered") and any user sizes and offsets, and
/// behave exactly like System.IO's <see cref="FileStream"/>: its aligned layer rounds every transfer to whole
/// blocks, so no misaligned request reaches the kernel (which would fail with EINVAL). Runs every buffer size
/// against every engine, synchronously and asynchronously, beside a FileStream, comparing results and bytes on disk.
/// </summary>
public class DirectStreamBufferSizeTests
{
    private readonly ITestOutputHelper _output;

    public DirectStreamBufferSizeTests(ITestOutputHelper output) => _output = output;

    private static readonly int[] s_bufferSizes = [0, 1, 512, 1000, 4095, 4096, 6000, 65536, 100_000];
    private static readonly IoEngine[] s_engines = [IoEngine.Sync, IoEngine.ThreadPool, IoEngine.IoUring];

    /// <summary>Every buffer size × sync/async × engine.</summary>
    public static TheoryData<int, bool, IoEngine> Matrix()
    {
        var data = new TheoryData<int, bool, IoEngine>();
        foreach (int bufferSize in s_bufferSizes)
        {
            foreach (bool async in new[] { false, true })
            {
                foreach (IoEngine engine in s_engines)
                {
                    data.Add(bufferSize, async, engine);
                }
            }
        }
        return data;
    }

    /// <summary>Every buffer size, for the tests whose engine does not matter (synchronous calls only).</summary>
    public static TheoryData<int> BufferSizes()
    {
        var data = new TheoryData<int>();
        foreach (int bufferSize in s_bufferSizes)
        {
            data.Add(bufferSize);
        }
        return data;
    }

    private static SpindleFileStream OpenDirect(string path, FileMode mode, FileAccess access, int bufferSize, bool async, IoEngine engine)
    {
        var stream = new SpindleFileStream(path, new SpindleFileOptions
        {
            Mode = mode,
            Access = access,
            Share = FileShare.Read,
            BufferSize = bufferSize,
            DirectIO = true,
            Engine = engine,
            Options = async ? FileOptions.Asynchronous : FileOptions.None,
        });
        Assert.True(SpindleFile.IsDirectIO(stream.SafeFileHandle), "the stream's handle must really be O_DIRECT");
        return stream;
    }

    [Theory]
    [MemberData(nameof(Matrix))]
    public async Task Random_operations_with_odd_sizes_and_offsets_match_FileStream(int bufferSize, bool async, IoEngine engine)
    {
        using var dir = DirectIOTests.DiskDirectory();
        int seed = bufferSize * 8 + (async ? 4 : 0) + (int)engine; // fixed per case, so a failure replays
        var random = new Random(seed);
        _output.WriteLine($"seed {seed}");
        var steps = new List<string>();
        try
        {
            await using (var system = new FileStream(dir.File("system"), FileMode.Create, FileAccess.ReadWrite, FileShare.Read, bufferSize, async))
            await using (SpindleFileStream spindle = OpenDirect(dir.File("spindle"), FileMode.Create, FileAccess.ReadWrite, bufferSize, async, engine))
            {
                for (int step = 0; step < 120; step++)
                {
                    steps.Add(async ? await StepAsync(random, system, spindle) : Step(random, system, spindle));
                    Assert.True(system.Position == spindle.Position, $"position {spindle.Position}, expected {system.Position}");
                    Assert.True(system.Length == spindle.Length, $"length {spindle.Length}, expected {system.Length}");
                }
            }
            AssertSameFiles(dir.File("system"), dir.File("spindle"));
        }
        catch
        {
            _output.WriteLine("steps: " + string.Join(", ", steps));
            throw;
        }
    }

    /// <summary>What <c>spindle tune</c> does: write a file with one stream, read it back with another, blocks of any size.</summary>
    [Theory]
    [MemberData(nameof(BufferSizes))]
    public void Write_only_then_read_only_streams_with_odd_blocks_match_FileStream(int bufferSize)
    {
        using var dir = DirectIOTests.DiskDirectory();
        const int FileSize = 300_001;
        byte[] content = CopyTests.RandomBytes(FileSize, bufferSize + 1);
        foreach (int block in new[] { 1, 1000, 1024, 4097, 70_000 })
        {
            string path = dir.File($"tune-{block}");
            using (SpindleFileStream writer = OpenDirect(path, FileMode.Create, FileAccess.Write, bufferSize, async: false, IoEngine.Auto))
            {
                for (int done = 0; done < FileSize; done += block)
                {
                    writer.Write(content, done, Math.Min(block, FileSize - done));
                }
            }
            Assert.True(content.AsSpan().SequenceEqual(File.ReadAllBytes(path)), $"block {block}: the written file differs");

            byte[] back = new byte[FileSize + block];
            using (SpindleFileStream reader = OpenDirect(path, FileMode.Open, FileAccess.Read, bufferSize, async: false, IoEngine.Auto))
            using (var system = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.Read, bufferSize))
            {
                byte[] expected = new byte[block];
                int total = 0;
                while (true)
                {
                    // The offset into the user's array is a multiple of the odd block: as odd as the count.
                    int read = reader.Read(back, total, block);
                    int systemRead = system.Read(expected, 0, block);
                    Assert.Equal(systemRead, read);
                    Assert.True(expected.AsSpan(0, read).SequenceEqual(back.AsSpan(total, read)), $"block {block} at {total}: bytes differ");
                    if (read == 0)
                    {
                        break;
                    }
                    total += read;
                }
                Assert.Equal(FileSize, total);
            }
            Assert.True(content.AsSpan().SequenceEqual(back.AsSpan(0, FileSize)), $"block {block}: the bytes read differ");
        }
    }

    [Theory]
    [InlineData(512)]
    [InlineData(4096)]
    [InlineData(65536)]
    [InlineData(1 << 20)]
    public void The_window_is_a_multiple_of_the_alignment_for_any_buffer_size(int offsetAlignment)
    {
        var alignment = new DirectIOAlignment(512, offsetAlignment);
        foreach (int bufferSize in new[] { 0, 1, 512, 1000, 4095, 4096, 6000, 65535, 65536, 65537, 100_000, 1 << 24, (1 << 24) + 1, 1 << 30, int.MaxValue })
        {
            int window = Spindle.Streams.DirectFileStreamStrategy.WindowSize(bufferSize, alignment);
            Assert.True(window > 0 && window % offsetAlignment == 0, $"buffer {bufferSize}: window {window} is not whole blocks of {offsetAlignment}");
            Assert.True(window >= Math.Min(bufferSize, Spindle.Streams.DirectFileStreamStrategy.MaximumWindow), $"buffer {bufferSize}: window {window} is smaller than asked");
            Assert.True(window >= Spindle.Streams.DirectFileStreamStrategy.MinimumWindow);
            Assert.True(window <= Math.Max(Spindle.Streams.DirectFileStreamStrategy.MaximumWindow, offsetAlignment), $"buffer {bufferSize}: window {window} is above the cap");
        }
    }

    /// <summary>
    /// The window is allocated when the stream opens: a buffer size no window can have must not fail then, after
    /// <see cref="FileMode.Create"/> has already emptied the file. (System.IO's own buffer of that size would fail on
    /// first use with OutOfMemoryException, so there is nothing to compare with: the bytes must simply be right.)
    /// </summary>
    [Theory]
    [InlineData((1 << 30) + 1)]
    [InlineData(int.MaxValue)]
    public void A_huge_buffer_size_opens_and_gives_the_right_bytes(int bufferSize)
    {
        using var dir = DirectIOTests.DiskDirectory();
        string path = dir.File("huge");
        byte[] data = CopyTests.RandomBytes(50_001, 5);
        using (SpindleFileStream stream = OpenDirect(path, FileMode.Create, FileAccess.ReadWrite, bufferSize, async: false, IoEngine.Auto))
        {
            stream.Write(data, 0, 1234);
            stream.Write(data, 1234, data.Length - 1234);
            stream.Position = 7;
            byte[] back = new byte[1000];
            stream.ReadExactly(back);
            Assert.Equal(data[7..1007], back);
        }
        Assert.Equal(data, File.ReadAllBytes(path));
    }

    /// <summary>The atomic-append layer, like System.IO, allocates its buffer on first use: a huge size does not fail the open.</summary>
    [Fact]
    public void An_atomic_append_stream_with_a_huge_buffer_size_opens_and_reads()
    {
        using var dir = DirectIOTests.DiskDirectory();
        string path = dir.File("log");
        byte[] data = CopyTests.RandomBytes(5000, 9);
        File.WriteAllBytes(path, data);
        using (var stream = new SpindleFileStream(path, new SpindleFileOptions
        {
            Mode = FileMode.Open, Access = FileAccess.ReadWrite, BufferSize = int.MaxValue, AtomicAppend = true,
        }))
        {
            byte[] back = new byte[data.Length];
            stream.ReadExactly(back);
            Assert.Equal(data, back);
        }
        Assert.Equal(data, File.ReadAllBytes(path));
    }

    private static string Step(Random random, FileStream system, SpindleFileStream spindle)
    {
        int choice = random.Next(100);
        if (choice < 35)
        {
            (byte[] array, int offset, int count) = OddSlice(random);
            system.Write(array, offset, count);
            spindle.Write(array, offset, count);
            return $"write {offset}+{count}";
        }
        if (choice < 65)
        {
            int count = OddCount(random);
            int offset = random.Next(0, 9);
            byte[] a = new byte[offset + count], b = new byte[offset + count];
            int ra = system.Read(a, offset, count), rb = spindle.Read(b, offset, count);
            Assert.Equal(ra, rb);
            Assert.Equal(a, b);
            return $"read {offset}+{count}={ra}";
        }
        if (choice < 82)
        {
            long target = random.Next(0, (int)system.Length + 9000);
            Assert.Equal(system.Seek(target, SeekOrigin.Begin), spindle.Seek(target, SeekOrigin.Begin));
            return $"seek {target}";
        }
        if (choice < 87)
        {
            long offset = random.Next(-(int)Math.Min(system.Length, 5000), 3000);
            Assert.Equal(system.Seek(offset, SeekOrigin.End), spindle.Seek(offset, SeekOrigin.End));
            return $"seek end {offset}";
        }
        if (choice < 91)
        {
            long length = random.Next(0, (int)system.Length + 5000);
            system.SetLength(length);
            spindle.SetLength(length);
            return $"setlength {length}";
        }
        if (choice < 96)
        {
            byte value = (byte)random.Next(256);
            system.WriteByte(value);
            spindle.WriteByte(value);
            Assert.Equal(system.ReadByte(), spindle.ReadByte());
            return "bytes";
        }
        system.Flush();
        spindle.Flush();
        return "flush";
    }

    private static async Task<string> StepAsync(Random random, FileStream system, SpindleFileStream spindle)
    {
        int choice = random.Next(100);
        if (choice < 38)
        {
            (byte[] array, int offset, int count) = OddSlice(random);
            await system.WriteAsync(array.AsMemory(offset, count));
            await spindle.WriteAsync(array.AsMemory(offset, count)).AsTask().WaitAsync(TimeSpan.FromSeconds(30));
            return $"write {offset}+{count}";
        }
        if (choice < 72)
        {
            int count = OddCount(random);
            int offset = random.Next(0, 9);
            byte[] a = new byte[offset + count], b = new byte[offset + count];
            int ra = await system.ReadAsync(a.AsMemory(offset, count));
            int rb = await spindle.ReadAsync(b.AsMemory(offset, count)).AsTask().WaitAsync(TimeSpan.FromSeconds(30));
            Assert.Equal(ra, rb);
            Assert.Equal(a, b);
            return $"read {offset}+{count}={ra}";
        }
        if (choice < 88)
        {
            long target = random.Next(0, (int)system.Length + 9000);
            system.Position = target;
            spindle.Position = target;
            return $"position {target}";
        }
        if (choice < 92)
        {
            // A synchronous call on an asynchronous stream, as System.IO allows.
            (byte[] array, int offset, int count) = OddSlice(random);
            system.Write(array, offset, count);
            spindle.Write(array, offset, count);
            return $"sync write {offset}+{count}";
        }
        await system.FlushAsync();
        await spindle.FlushAsync().WaitAsync(TimeSpan.FromSeconds(30));
        return "flush";
    }

    /// <summary>Mostly sizes that are not multiples of anything, some larger than every window.</summary>
    private static int OddCount(Random random) => random.Next(10) switch
    {
        0 => random.Next(100_001, 160_000),
        1 => 4096 * random.Next(1, 20),
        2 => random.Next(0, 3),
        _ => random.Next(1, 13_000),
    };

    private static (byte[] Array, int Offset, int Count) OddSlice(Random random)
    {
        int count = Math.Max(1, OddCount(random));
        int offset = random.Next(0, 9);
        byte[] array = new byte[offset + count + random.Next(0, 5)];
        random.NextBytes(array);
        return (array, offset, count);
    }

    private void AssertSameFiles(string expected, string actual)
    {
        byte[] a = File.ReadAllBytes(expected), b = File.ReadAllBytes(actual);
        _output.WriteLine($"final length {a.Length}");
        Assert.Equal(a.Length, b.Length);
        Assert.True(a.AsSpan().SequenceEqual(b), "the files differ");
    }
}
