using Microsoft.Win32.SafeHandles;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.RandomAccess;

/// <summary>
/// Pipes, FIFOs, sockets and character devices. The one intended difference from .NET 10: on a handle
/// without positions Spindle reads and writes ignoring the offset (as .NET 11 does) where .NET 10's
/// RandomAccess throws <see cref="NotSupportedException"/>. Everything else matches.
/// </summary>
public class SyncNonSeekableTests
{
    public static TheoryData<string> Kinds() => ["pipe", "fifo-spindle", "fifo-system", "socket"];

    private sealed class Channel(SafeFileHandle reader, SafeFileHandle writer, IDisposable? owner = null) : IDisposable
    {
        public SafeFileHandle Reader { get; } = reader;
        public SafeFileHandle Writer { get; } = writer;

        public void Dispose()
        {
            Reader.Dispose();
            Writer.Dispose();
            owner?.Dispose();
        }
    }

    private static Channel Open(string kind)
    {
        switch (kind)
        {
            case "pipe":
            {
                (SafeFileHandle read, SafeFileHandle write) = TestLibc.CreatePipe();
                return new Channel(read, write);
            }
            case "socket":
            {
                (SafeFileHandle a, SafeFileHandle b) = TestLibc.CreateSocketPair();
                return new Channel(a, b);
            }
            default:
            {
                var directory = new TempDirectory();
                string path = directory.File("fifo");
                TestLibc.CreateFifo(path);
                // Read-write opens of a FIFO never wait for a peer; one handle reads, the other writes.
                Func<FileAccess, SafeFileHandle> open = kind == "fifo-spindle"
                    ? access => SpindleFile.OpenHandle(path, FileMode.Open, access, FileShare.ReadWrite)
                    : access => File.OpenHandle(path, FileMode.Open, access, FileShare.ReadWrite);
                SafeFileHandle reader = open(FileAccess.ReadWrite);
                SafeFileHandle writer = open(FileAccess.Write);
                return new Channel(reader, writer, directory);
            }
        }
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public void System_IO_of_NET_10_refuses_offsets_on_the_handle_and_Spindle_ignores_them(string kind)
    {
        using Channel channel = Open(kind);
        // .NET 10 (the runtime these tests run on): NotSupportedException for every positional call.
        Assert.Throws<NotSupportedException>(() => System.IO.RandomAccess.Write(channel.Writer, "x"u8, 0));
        Assert.Throws<NotSupportedException>(() => System.IO.RandomAccess.Read(channel.Reader, new byte[1], 0));
        Assert.Throws<NotSupportedException>(() => System.IO.RandomAccess.Write(channel.Writer, [new byte[1]], 0));
        Assert.Throws<NotSupportedException>(() => System.IO.RandomAccess.Read(channel.Reader, [new byte[1]], 0));

        // Spindle (like .NET 11): the offset is ignored; bytes arrive in order.
        SpindleRandomAccess.Write(channel.Writer, "hello "u8, 12345);
        SpindleRandomAccess.Write(channel.Writer, [new byte[] { (byte)'w' }, Array.Empty<byte>(), "orld"u8.ToArray()], 7);
        var buffer = new byte[11];
        int total = 0;
        while (total < buffer.Length)
        {
            int read = SpindleRandomAccess.Read(channel.Reader, buffer.AsSpan(total), 999);
            Assert.True(read > 0);
            total += read;
        }
        Assert.Equal("hello world"u8.ToArray(), buffer);

        SpindleRandomAccess.Write(channel.Writer, "abcdef"u8, 0);
        var first = new byte[2];
        var second = new byte[4];
        long scattered = 0;
        while (scattered < 6)
        {
            scattered += SpindleRandomAccess.Read(channel.Reader, scattered < 2 ? [first.AsMemory((int)scattered), second] : [second.AsMemory((int)scattered - 2)], 5);
        }
        Assert.Equal("ab"u8.ToArray(), first);
        Assert.Equal("cdef"u8.ToArray(), second);

        // Negative offsets are still refused before any system call, and a zero-length read returns at once.
        Assert.Throws<ArgumentOutOfRangeException>(() => SpindleRandomAccess.Read(channel.Reader, new byte[1], -1));
        Assert.Throws<ArgumentOutOfRangeException>(() => SpindleRandomAccess.Write(channel.Writer, "x"u8, -1));
        Assert.Equal(0, SpindleRandomAccess.Read(channel.Reader, Span<byte>.Empty, 0));
    }

    [Theory]
    [MemberData(nameof(Kinds))]
    public void Length_and_flush_behave_like_System_IO(string kind)
    {
        using Channel channel = Open(kind);
        foreach (SafeFileHandle handle in new[] { channel.Reader, channel.Writer })
        {
            Assert.Equal(Outcome.Of(() => System.IO.RandomAccess.GetLength(handle)), Outcome.Of(() => SpindleRandomAccess.GetLength(handle)));
            Assert.Equal(Outcome.Of(() => System.IO.RandomAccess.SetLength(handle, 0)), Outcome.Of(() => SpindleRandomAccess.SetLength(handle, 0)));
            Assert.Equal(Outcome.Of(() => System.IO.RandomAccess.FlushToDisk(handle)), Outcome.Of(() => SpindleRandomAccess.FlushToDisk(handle)));
        }
    }

    [Fact]
    public void Writing_to_a_pipe_without_readers_fails_like_System_IO()
    {
        // EPIPE (SIGPIPE is ignored by the runtime). System.IO's FileStream is the reference here, since
        // its RandomAccess refuses pipes on .NET 10.
        (SafeFileHandle read, SafeFileHandle write) = TestLibc.CreatePipe();
        read.Dispose();
        using (write)
        {
            Outcome spindle = Outcome.Of(() => SpindleRandomAccess.Write(write, "x"u8, 0));
            using var stream = new FileStream(write, FileAccess.Write, bufferSize: 0);
            Outcome system = Outcome.Of(() => stream.Write("x"u8));
            Assert.Equal(system, spindle);
            Assert.Equal(32, spindle.HResult);
        }
    }

    [Fact]
    public void Empty_non_blocking_pipe_fails_a_read_like_System_IO()
    {
        // EAGAIN surfaces as System.IO's IOException with errno 11 (FileStream is the reference on .NET 10).
        (SafeFileHandle read, SafeFileHandle write) = TestLibc.CreatePipe(nonBlocking: true);
        using (write)
        using (read)
        {
            Outcome spindle = Outcome.Of(() => SpindleRandomAccess.Read(read, new byte[10], 0));
            using var stream = new FileStream(read, FileAccess.Read, bufferSize: 0);
            Outcome system = Outcome.Of(() => stream.Read(new byte[10]));
            Assert.Equal(system, spindle);
            Assert.Equal(11, spindle.HResult);
        }
    }

    [Theory]
    [InlineData("/dev/null")]
    [InlineData("/dev/zero")]
    public void Character_devices_that_accept_lseek_match_System_IO_exactly(string device)
    {
        // lseek succeeds on these devices, so System.IO treats them as seekable and so does Spindle.
        var differences = new List<string>();
        foreach (FileAccess access in Enum.GetValues<FileAccess>())
        {
            using SafeFileHandle system = File.OpenHandle(device, FileMode.Open, access, FileShare.ReadWrite);
            using SafeFileHandle spindle = SpindleFile.OpenHandle(device, FileMode.Open, access, FileShare.ReadWrite);
            foreach ((string name, Func<RandomAccessApi, SafeFileHandle, object?> run) in new (string, Func<RandomAccessApi, SafeFileHandle, object?>)[]
            {
                ("read", (api, h) => { var b = new byte[8]; b[0] = 9; return api.Read(h, b, 100) + Convert.ToHexString(b); }),
                ("scatter", (api, h) => api.Read(h, [new byte[3], new byte[5]], 7)),
                ("write", (api, h) => { api.Write(h, "data"u8, 1000); return null; }),
                ("gather", (api, h) => { api.Write(h, [new byte[3], new byte[5]], 7); return null; }),
                ("length", (api, h) => api.GetLength(h)),
                ("set length", (api, h) => { api.SetLength(h, 10); return null; }),
                ("flush", (api, h) => { api.FlushToDisk(h); return null; }),
            })
            {
                Outcome expected = Outcome.Of(() => run(RandomAccessApi.SystemIo, system));
                Outcome actual = Outcome.Of(() => run(RandomAccessApi.Spindle, spindle));
                if (expected != actual)
                {
                    differences.Add($"{device} {access} {name}: System.IO {expected}, Spindle {actual}");
                }
            }
        }
        Assert.True(differences.Count == 0, string.Join("\n", differences));
    }
}
