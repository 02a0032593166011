using System.Buffers;
using System.Runtime.InteropServices;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Streams;

/// <summary>
/// The stream contract, run unbuffered/buffered × sync/async opening on every engine, each check
/// compared with <see cref="FileStream"/> opened the same way.
/// </summary>
public class StreamConformanceTests
{
    public static TheoryData<StreamConfiguration> Configurations => StreamConfiguration.All();

    private static byte[] Bytes(int length, int seed)
    {
        byte[] data = new byte[length];
        new Random(seed).NextBytes(data);
        return data;
    }

    [Theory]
    [MemberData(nameof(Configurations))]
    public async Task Argument_validation_matches_FileStream(StreamConfiguration configuration)
    {
        using var dir = new TempDirectory();
        await using var pair = new StreamPair(dir, configuration, Bytes(100, 1));
        byte[] buffer = new byte[10];
        pair.Same(s => s.Read(null!, 0, 1), "Read(null)");
        pair.Same(s => s.Read(buffer, -1, 1), "Read(offset -1)");
        pair.Same(s => s.Read(buffer, 0, -1), "Read(count -1)");
        pair.Same(s => s.Read(buffer, 5, 6), "Read(past the array)");
        pair.Same(s => s.Write(null!, 0, 1), "Write(null)");
        pair.Same(s => s.Write(buffer, 11, 0), "Write(offset past the array)");
        pair.Same(s => s.Write(buffer, 0, 11), "Write(count past the array)");
        await pair.SameAsync(s => s.ReadAsync(null!, 0, 1), "ReadAsync(null)");
        await pair.SameAsync(s => s.ReadAsync(buffer, 3, 8), "ReadAsync(past the array)");
        await pair.SameAsync(s => s.WriteAsync(null!, 0, 1), "WriteAsync(null)");
        await pair.SameAsync(s => s.WriteAsync(buffer, -1, 1), "WriteAsync(offset -1)");
        pair.Same(s => s.BeginRead(null!, 0, 1, null, null), "BeginRead(null)");
        pair.Same(s => s.BeginWrite(buffer, 0, 11, null, null), "BeginWrite(past the array)");
        pair.Same(s => s.EndRead(null!), "EndRead(null)");
        pair.Same(s => s.Seek(0, (SeekOrigin)3), "Seek(bad origin)");
        pair.Same(s => s.Seek(-1, SeekOrigin.Begin), "Seek(-1)");
        pair.Same(s => s.Position = -1, "Position = -1");
        pair.Same(s => s.SetLength(-1), "SetLength(-1)");
        pair.Same(s => s.CopyTo(null!), "CopyTo(null)");
        pair.Same(s => s.CopyTo(new MemoryStream(), 0), "CopyTo(bufferSize 0)");
        pair.Same(s => s.CopyTo(new MemoryStream(new byte[1], writable: false)), "CopyTo(read-only destination)");
        await pair.SameAsync(s => s.CopyToAsync(null!), "CopyToAsync(null)");
        pair.Same(s => Lock(s, -1, 1), "Lock(-1)");
        pair.Same(s => Lock(s, 0, -1), "Lock(length -1)");
        pair.SameState("after invalid calls");
        await pair.AssertSameFilesAsync();
    }

    private static void Lock(Stream stream, long position, long length)
    {
        if (stream is FileStream fileStream)
        {
            fileStream.Lock(position, length);
        }
        else
        {
            ((SpindleFileStream)stream).Lock(position, length);
        }
    }

    [Theory]
    [MemberData(nameof(Configurations))]
    public async Task Disposed_stream_behaves_like_FileStream(StreamConfiguration configuration)
    {
        using var dir = new TempDirectory();
        var pair = new StreamPair(dir, configuration, Bytes(100, 2));
        pair.Same(s => s.Write(new byte[3]), "Write before dispose");
        await pair.DisposeAsync();
        pair.Same(s => s.Dispose(), "second Dispose");
        await pair.SameAsync(s => s.DisposeAsync().AsTask(), "DisposeAsync after Dispose");
        byte[] buffer = new byte[10];
        var cancelled = new CancellationToken(canceled: true);
        pair.Same(s => (s.CanRead, s.CanWrite, s.CanSeek), "Can*");
        pair.Same(s => s.Read(buffer, 0, 1), "Read(byte[])");
        pair.Same(s => s.Read(buffer.AsSpan()), "Read(span)");
        pair.Same(s => s.ReadByte(), "ReadByte");
        pair.Same(s => s.Write(buffer, 0, 1), "Write(byte[])");
        pair.Same(s => s.Write(buffer.AsSpan()), "Write(span)");
        pair.Same(s => s.WriteByte(1), "WriteByte");
        await pair.SameAsync(s => s.ReadAsync(buffer, 0, 1), "ReadAsync(byte[])");
        await pair.SameAsync(s => s.ReadAsync(buffer.AsMemory()).AsTask(), "ReadAsync(memory)");
        await pair.SameAsync(s => s.WriteAsync(buffer, 0, 1), "WriteAsync(byte[])");
        await pair.SameAsync(s => s.WriteAsync(buffer.AsMemory()).AsTask(), "WriteAsync(memory)");
        await pair.SameAsync(s => s.ReadAsync(buffer.AsMemory(), cancelled).AsTask(), "ReadAsync(cancelled)");
        await pair.SameAsync(s => s.WriteAsync(buffer, 0, 1, cancelled), "WriteAsync(cancelled)");
        await pair.SameAsync(s => s.FlushAsync(cancelled), "FlushAsync(cancelled)");
        pair.Same(s => s.BeginRead(buffer, 0, 1, null, null), "BeginRead");
        pair.Same(s => s.BeginWrite(buffer, 0, 1, null, null), "BeginWrite");
        pair.Same(s => s.Position, "Position");
        pair.Same(s => s.Position = 1, "Position =");
        pair.Same(s => s.Length, "Length");
        pair.Same(s => s.Seek(0, SeekOrigin.Begin), "Seek");
        pair.Same(s => s.SetLength(1), "SetLength");
        pair.Same(s => s.Flush(), "Flush");
        await pair.SameAsync(s => s.FlushAsync(), "FlushAsync");
        pair.Same(s => s.CopyTo(new MemoryStream()), "CopyTo");
        await pair.SameAsync(s => s.CopyToAsync(new MemoryStream()), "CopyToAsync");
        pair.Same(s => Lock(s, 0, 1), "Lock");
        pair.Same(s => s is FileStream f ? f.Name.EndsWith("-system") : ((SpindleFileStream)s).Name.EndsWith("-spindle"), "Name");
        pair.Same(s => s is FileStream f ? f.IsAsync : ((SpindleFileStream)s).IsAsync, "IsAsync");
        pair.Same(s => s is FileStream f ? f.SafeFileHandle.IsClosed : ((SpindleFileStream)s).SafeFileHandle.IsClosed, "SafeFileHandle");
        await pair.AssertSameFilesAsync();
    }

    [Theory]
    [MemberData(nameof(Configurations))]
    public async Task Precancelled_tokens_fail_without_touching_the_file(StreamConfiguration configuration)
    {
        using var dir = new TempDirectory();
        await using var pair = new StreamPair(dir, configuration, Bytes(100, 3));
        var cancelled = new CancellationToken(canceled: true);
        byte[] buffer = new byte[10];
        pair.Same(s => s.Seek(10, SeekOrigin.Begin), "Seek");
        await pair.SameAsync(s => s.ReadAsync(buffer.AsMemory(), cancelled).AsTask(), "ReadAsync(memory)");
        await pair.SameAsync(s => s.ReadAsync(buffer, 0, 10, cancelled), "ReadAsync(byte[])");
        await pair.SameAsync(s => s.WriteAsync(buffer.AsMemory(), cancelled).AsTask(), "WriteAsync(memory)");
        await pair.SameAsync(s => s.WriteAsync(buffer, 0, 10, cancelled), "WriteAsync(byte[])");
        await pair.SameAsync(s => s.FlushAsync(cancelled), "FlushAsync");
        await pair.SameAsync(s => s.CopyToAsync(new MemoryStream(), 100, cancelled), "CopyToAsync");
        pair.SameState("after cancelled calls");
        Assert.Equal(10, pair.Spindle.Position);
        await pair.AssertSameFilesAsync();
    }

    [Theory]
    [MemberData(nameof(Configurations))]
    public async Task Reads_and_writes_land_at_the_requested_offsets(StreamConfiguration configuration)
    {
        using var dir = new TempDirectory();
        await using var pair = new StreamPair(dir, configuration, Bytes(10_000, 4));
        byte[] patch = Bytes(3000, 5);
        foreach (long offset in new long[] { 0, 1, 4095, 4096, 7000, 9999, 12_000 })
        {
            pair.Same(s => s.Seek(offset, SeekOrigin.Begin), $"Seek {offset}");
            await pair.SameAsync(s => s.WriteAsync(patch, 0, 100 + (int)(offset % 2000)), $"WriteAsync at {offset}");
            pair.Same(s => s.Position = offset / 2, $"Position = {offset / 2}");
            pair.Same(s => s.Write(patch.AsSpan(0, 17)), $"Write at {offset / 2}");
            pair.Same(s => s.Seek(-(offset / 3), SeekOrigin.Current), "Seek back");
            pair.Same(s => Read(s, 5000), "Read");
            await pair.SameAsync(async s => { byte[] b = new byte[333]; int n = await s.ReadAsync(b); return Convert.ToHexString(b, 0, n); }, "ReadAsync");
            pair.SameState($"offset {offset}");
        }
        await pair.AssertSameFilesAsync();
    }

    private static string Read(Stream stream, int size)
    {
        byte[] buffer = new byte[size];
        int read = stream.Read(buffer, 0, size);
        return Convert.ToHexString(buffer, 0, read);
    }

    [Theory]
    [MemberData(nameof(Configurations))]
    public async Task Reading_past_the_end_returns_zero_and_keeps_the_position(StreamConfiguration configuration)
    {
        using var dir = new TempDirectory();
        await using var stream = configuration.OpenSpindle(dir.File("f"), FileMode.Create);
        stream.Write(Bytes(50, 6));
        stream.Seek(200, SeekOrigin.Begin);
        byte[] buffer = new byte[10];
        Assert.Equal(0, stream.Read(buffer));
        Assert.Equal(0, await stream.ReadAsync(buffer));
        Assert.Equal(-1, stream.ReadByte());
        Assert.Equal(200, stream.Position);
        Assert.Equal(50, stream.Length);
        stream.Seek(45, SeekOrigin.Begin);
        Assert.Equal(5, await stream.ReadAsync(buffer));
        Assert.Equal(0, await stream.ReadAsync(buffer));
        Assert.Equal(50, stream.Position);
    }

    [Theory]
    [MemberData(nameof(Configurations))]
    public async Task A_short_read_leaves_the_rest_of_the_buffer_untouched(StreamConfiguration configuration)
    {
        using var dir = new TempDirectory();
        byte[] content = Bytes(10, 7);
        File.WriteAllBytes(dir.File("f"), content);
        await using var stream = configuration.OpenSpindle(dir.File("f"), FileMode.Open, FileAccess.Read);
        byte[] buffer = new byte[100];
        buffer.AsSpan().Fill(0xEE);
        Assert.Equal(10, await stream.ReadAsync(buffer.AsMemory(5)));
        Assert.Equal(content, buffer[5..15]);
        Assert.All(buffer[..5], b => Assert.Equal(0xEE, b));
        Assert.All(buffer[15..], b => Assert.Equal(0xEE, b));
        stream.Position = 4;
        buffer.AsSpan().Fill(0xEE);
        Assert.Equal(6, stream.Read(buffer, 0, 100));
        Assert.Equal(content[4..], buffer[..6]);
        Assert.All(buffer[6..], b => Assert.Equal(0xEE, b));
    }

    /// <summary>Memory that is not an array: the stream must not assume it can get one.</summary>
    private sealed unsafe class NativeMemoryManager : MemoryManager<byte>
    {
        private readonly byte* _pointer;
        private readonly int _length;

        internal NativeMemoryManager(int length)
        {
            _pointer = (byte*)NativeMemory.AllocZeroed((nuint)length);
            _length = length;
        }

        public override Span<byte> GetSpan() => new(_pointer, _length);

        public override MemoryHandle Pin(int elementIndex = 0) => new(_pointer + elementIndex);

        public override void Unpin()
        {
        }

        protected override void Dispose(bool disposing) => NativeMemory.Free(_pointer);
    }

    [Theory]
    [MemberData(nameof(Configurations))]
    public async Task Custom_MemoryManager_buffers_work_for_reads_and_writes(StreamConfiguration configuration)
    {
        using var dir = new TempDirectory();
        using var source = new NativeMemoryManager(10_000);
        using var destination = new NativeMemoryManager(10_000);
        Bytes(10_000, 8).CopyTo(source.GetSpan());
        await using var stream = configuration.OpenSpindle(dir.File("f"), FileMode.Create);
        await stream.WriteAsync(source.Memory[..100]);
        await stream.WriteAsync(source.Memory[100..]);
        stream.Position = 0;
        int total = 0;
        while (total < 10_000)
        {
            int read = await stream.ReadAsync(destination.Memory.Slice(total, Math.Min(3000, 10_000 - total)));
            Assert.True(read > 0);
            total += read;
        }
        Assert.True(source.GetSpan().SequenceEqual(destination.GetSpan()));
    }

    [Theory]
    [MemberData(nameof(Configurations))]
    public async Task CopyTo_starts_at_the_current_position(StreamConfiguration configuration)
    {
        using var dir = new TempDirectory();
        await using var pair = new StreamPair(dir, configuration, Bytes(20_000, 9));
        pair.Same(s => s.Seek(1234, SeekOrigin.Begin), "Seek");
        pair.Same(s => { var m = new MemoryStream(); s.CopyTo(m); return m.ToArray(); }, "CopyTo");
        pair.SameState("after CopyTo");
        pair.Same(s => s.Seek(777, SeekOrigin.Begin), "Seek");
        pair.Same(s => s.ReadByte(), "ReadByte");
        await pair.SameAsync(async s => { var m = new MemoryStream(); await s.CopyToAsync(m); return m.ToArray(); }, "CopyToAsync");
        pair.SameState("after CopyToAsync");
        pair.Same(s => s.Seek(5, SeekOrigin.Begin), "Seek");
        pair.Same(s => s.Write(new byte[] { 1, 2, 3 }), "Write");
        await pair.SameAsync(async s => { var m = new MemoryStream(); await s.CopyToAsync(m); return m.ToArray(); }, "CopyToAsync after a buffered write");
        await pair.AssertSameFilesAsync();
    }

    [Theory]
    [MemberData(nameof(Configurations))]
    public async Task Flushing_is_idempotent(StreamConfiguration configuration)
    {
        using var dir = new TempDirectory();
        await using var stream = configuration.OpenSpindle(dir.File("f"), FileMode.Create);
        byte[] data = Bytes(100, 10);
        stream.Write(data);
        stream.Flush();
        Assert.Equal(data, ReadShared(dir.File("f")));
        stream.Flush();
        await stream.FlushAsync();
        await stream.FlushAsync();
        stream.Flush(flushToDisk: true);
        stream.Flush(flushToDisk: true);
        Assert.Equal(data, ReadShared(dir.File("f")));
        Assert.Equal(100, stream.Position);
        Assert.Equal(100, stream.Length);

        await using var reader = configuration.OpenSpindle(dir.File("f"), FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
        reader.ReadByte();
        reader.Flush();
        reader.Flush(flushToDisk: true);
        await reader.FlushAsync();
        Assert.Equal(1, reader.Position);
        Assert.Equal(data[1], reader.ReadByte());
    }

    private static byte[] ReadShared(string path)
    {
        using var stream = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
        var copy = new MemoryStream();
        stream.CopyTo(copy);
        return copy.ToArray();
    }

    [Theory]
    [MemberData(nameof(Configurations))]
    public async Task SetLength_grows_shrinks_and_refuses_read_only_streams(StreamConfiguration configuration)
    {
        using var dir = new TempDirectory();
        await using (var pair = new StreamPair(dir, configuration, Bytes(1000, 11)))
        {
            pair.Same(s => s.Seek(900, SeekOrigin.Begin), "Seek");
            pair.Same(s => s.Write(new byte[] { 1, 2, 3 }), "Write");
            pair.Same(s => s.SetLength(5000), "grow");
            pair.SameState("grown");
            pair.Same(s => s.SetLength(500), "shrink below the position");
            pair.SameState("shrunk");
            pair.Same(s => Read(s, 100), "Read after shrink");
            pair.Same(s => s.WriteByte(9), "WriteByte after shrink");
            pair.SameState("written");
            await pair.AssertSameFilesAsync();
        }
        await using (var readOnly = new StreamPair(dir, configuration, Bytes(1000, 12), FileMode.Open, FileAccess.Read))
        {
            readOnly.Same(s => s.SetLength(10), "SetLength on a read-only stream");
            readOnly.SameState("read-only");
        }
    }

    [Theory]
    [MemberData(nameof(Configurations))]
    public async Task Random_walk_seeks_read_consistent_data(StreamConfiguration configuration)
    {
        using var dir = new TempDirectory();
        byte[] content = Bytes(50_000, 13);
        File.WriteAllBytes(dir.File("f"), content);
        await using var stream = configuration.OpenSpindle(dir.File("f"), FileMode.Open, FileAccess.Read);
        var random = new Random(14);
        long expectedPosition = 0;
        for (int i = 0; i < 300; i++)
        {
            int offset = random.Next(-60_000, 60_000);
            SeekOrigin origin = (SeekOrigin)random.Next(3);
            long target = origin switch { SeekOrigin.Begin => offset, SeekOrigin.Current => expectedPosition + offset, _ => content.Length + offset };
            if (target < 0)
            {
                Assert.Throws<IOException>(() => stream.Seek(offset, origin));
            }
            else
            {
                Assert.Equal(target, stream.Seek(offset, origin));
                expectedPosition = target;
            }
            Assert.Equal(expectedPosition, stream.Position);

            byte[] buffer = new byte[random.Next(0, 9000)];
            int read = random.Next(3) switch
            {
                0 => stream.Read(buffer),
                1 => await stream.ReadAsync(buffer),
                _ => ReadBytes(stream, buffer),
            };
            int expected = (int)Math.Clamp(content.Length - expectedPosition, 0, buffer.Length);
            Assert.Equal(expected, read);
            Assert.True(content.AsSpan((int)Math.Min(expectedPosition, content.Length), read).SequenceEqual(buffer.AsSpan(0, read)), $"step {i}");
            expectedPosition += read;
            Assert.Equal(expectedPosition, stream.Position);
        }
    }

    private static int ReadBytes(Stream stream, byte[] buffer)
    {
        int count = 0;
        while (count < buffer.Length)
        {
            int value = stream.ReadByte();
            if (value < 0)
            {
                break;
            }
            buffer[count++] = (byte)value;
        }
        return count;
    }

    [Theory]
    [MemberData(nameof(Configurations))]
    public async Task Seeking_past_the_end_then_writing_fills_the_gap_with_zeros(StreamConfiguration configuration)
    {
        using var dir = new TempDirectory();
        await using var pair = new StreamPair(dir, configuration, Bytes(100, 15));
        pair.Same(s => s.Seek(10_000, SeekOrigin.End), "Seek past the end");
        pair.SameState("past the end");
        await pair.SameAsync(s => s.WriteAsync(new byte[] { 7, 8, 9 }, 0, 3), "WriteAsync");
        pair.SameState("written");
        pair.Same(s => s.Seek(50_000, SeekOrigin.Begin), "Seek further");
        pair.Same(s => s.WriteByte(1), "WriteByte");
        pair.SameState("written again");
        await pair.AssertSameFilesAsync();
        byte[] bytes = File.ReadAllBytes(Directory.GetFiles(dir.Path, "*-spindle")[0]);
        Assert.Equal(50_001, bytes.Length);
        Assert.All(bytes[100..10_100], b => Assert.Equal(0, b));
    }

    [Theory]
    [MemberData(nameof(Configurations))]
    public async Task Append_mode_starts_at_the_end_and_protects_existing_data(StreamConfiguration configuration)
    {
        using var dir = new TempDirectory();
        await using var pair = new StreamPair(dir, configuration, Bytes(300, 16), FileMode.Append, FileAccess.Write);
        pair.SameState("opened");
        Assert.Equal(300, pair.Spindle.Position);
        pair.Same(s => s.Seek(-1, SeekOrigin.End), "Seek before the append start");
        pair.Same(s => s.Position = 0, "Position before the append start");
        pair.Same(s => s.SetLength(10), "SetLength before the append start");
        pair.SameState("refused");
        pair.Same(s => s.Write(new byte[] { 1, 2, 3 }), "Write");
        pair.Same(s => s.Seek(301, SeekOrigin.Begin), "Seek after the append start");
        pair.Same(s => s.WriteByte(4), "overwrite appended data");
        pair.Same(s => s.SetLength(300), "SetLength to the append start");
        pair.SameState("appended");
        await pair.AssertSameFilesAsync();
    }
}
