using Microsoft.Win32.SafeHandles;
using Spindle.Interop;
using Spindle.Syscalls;
using Spindle.Tests.Engines;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Streams;

/// <summary>
/// Streams over pipes (FIFOs, opened by path with every engine) and sockets (a <c>socketpair</c>,
/// wrapped by handle): no position, zero-byte calls, end of stream, traffic both ways at once, and a
/// broken pipe, compared with <see cref="FileStream"/> where it defines the outcome. Not in parallel
/// with other tests: a child process another test forks holds every descriptor of this process until
/// its exec, so a pipe whose reader was just closed may still have one (a write then succeeds where
/// the broken-pipe test expects EPIPE; seen once in a full run).
/// </summary>
[Collection(SerialCollection.Name)]
public class ConnectedStreamTests
{
    private static readonly TimeSpan s_timeout = TimeSpan.FromSeconds(30);

    public static TheoryData<StreamConfiguration> Configurations => StreamConfiguration.All();

    /// <summary>Opens both ends of a new FIFO; each open blocks until the other side opens.</summary>
    private static async Task<(Stream Reader, Stream Writer)> OpenFifoAsync(TempDirectory dir, Func<string, FileAccess, Stream> open)
    {
        string path = dir.File("fifo-" + Guid.NewGuid().ToString("N"));
        Assert.Equal(0, TestLibc.MkFifo(path, Convert.ToInt32("600", 8)));
        Task<Stream> reader = Task.Run(() => open(path, FileAccess.Read));
        Task<Stream> writer = Task.Run(() => open(path, FileAccess.Write));
        return (await reader.WaitAsync(s_timeout), await writer.WaitAsync(s_timeout));
    }

    private static Task<(Stream Reader, Stream Writer)> OpenSpindleFifoAsync(TempDirectory dir, StreamConfiguration configuration)
        => OpenFifoAsync(dir, (path, access) => configuration.OpenSpindle(path, FileMode.Open, access));

    [Theory]
    [MemberData(nameof(Configurations))]
    public async Task Pipes_carry_data_until_end_of_stream_and_cannot_seek(StreamConfiguration configuration)
    {
        using var dir = new TempDirectory();
        (Stream reader, Stream writer) = await OpenSpindleFifoAsync(dir, configuration);
        await using (reader)
        {
            Assert.False(reader.CanSeek);
            Assert.False(writer.CanSeek);
            Assert.Throws<NotSupportedException>(() => reader.Position);
            Assert.Throws<NotSupportedException>(() => reader.Position = 0);
            Assert.Throws<NotSupportedException>(() => reader.Seek(0, SeekOrigin.Begin));
            Assert.Throws<NotSupportedException>(() => reader.Length);
            Assert.Throws<NotSupportedException>(() => writer.SetLength(0));

            byte[] data = new byte[200_000];
            new Random(1).NextBytes(data);
            Task writing = Task.Run(async () =>
            {
                await using (writer)
                {
                    for (int offset = 0, i = 0; offset < data.Length; i++)
                    {
                        int size = Math.Min(data.Length - offset, 1 + (i * 7919 % 9000));
                        if (i % 2 == 0)
                        {
                            writer.Write(data, offset, size);
                        }
                        else
                        {
                            await writer.WriteAsync(data.AsMemory(offset, size));
                        }
                        offset += size;
                    }
                }
            });

            var received = new MemoryStream();
            byte[] buffer = new byte[5000];
            for (int i = 0; ; i++)
            {
                int read = i % 2 == 0 ? reader.Read(buffer, 0, 1 + i % buffer.Length) : await reader.ReadAsync(buffer.AsMemory(0, 1 + (i * 31) % buffer.Length));
                if (read == 0)
                {
                    break;
                }
                received.Write(buffer, 0, read);
            }
            await writing.WaitAsync(s_timeout);
            Assert.Equal(data, received.ToArray());
            // Still the end, every way of asking.
            Assert.Equal(0, reader.Read(buffer));
            Assert.Equal(-1, reader.ReadByte());
            Assert.Equal(0, await reader.ReadAsync(buffer));
        }
    }

    [Theory]
    [MemberData(nameof(Configurations))]
    public async Task Zero_byte_reads_and_writes_on_a_pipe_return_at_once(StreamConfiguration configuration)
    {
        using var dir = new TempDirectory();
        (Stream reader, Stream writer) = await OpenSpindleFifoAsync(dir, configuration);
        await using (reader)
        await using (writer)
        {
            writer.Write(Array.Empty<byte>());
            await writer.WriteAsync(ReadOnlyMemory<byte>.Empty);
            writer.Flush();
            // Nothing was written, so a zero-byte read must not wait for data either.
            Assert.Equal(0, await reader.ReadAsync(Memory<byte>.Empty).AsTask().WaitAsync(s_timeout));
            writer.WriteByte(42);
            writer.Flush();
            Assert.Equal(0, reader.Read(Span<byte>.Empty));
            Assert.Equal(42, reader.ReadByte());
        }
    }

    [Theory]
    [MemberData(nameof(Configurations))]
    public async Task Writing_to_a_pipe_without_a_reader_throws_IOException_like_FileStream(StreamConfiguration configuration)
    {
        using var dir = new TempDirectory();
        foreach (bool spindle in new[] { false, true })
        {
            (Stream reader, Stream writer) = spindle
                ? await OpenSpindleFifoAsync(dir, configuration)
                : await OpenFifoAsync(dir, (path, access) => configuration.OpenSystem(path, FileMode.Open, access));
            reader.Dispose();
            byte[] data = new byte[10];
            Assert.Throws<IOException>(() => { writer.Write(data); writer.Flush(); });
            await Assert.ThrowsAsync<IOException>(async () => { await writer.WriteAsync(data); await writer.FlushAsync(); });
            // Dispose may flush what is left: it fails the same way, and the handle is closed anyway.
            try
            {
                writer.Dispose();
            }
            catch (IOException)
            {
            }
            Assert.False(writer.CanWrite);
        }
    }

    private static unsafe (SafeFileHandle, SafeFileHandle) SocketPair(bool isAsync)
    {
        const int AF_UNIX = 1;
        const int SOCK_STREAM_CLOEXEC = 1 | 0x80000;
        int* fds = stackalloc int[2];
        Assert.Equal(0, TestLibc.SocketPair(AF_UNIX, SOCK_STREAM_CLOEXEC, 0, fds));
        var first = new SafeFileHandle(fds[0], ownsHandle: true);
        var second = new SafeFileHandle(fds[1], ownsHandle: true);
        // Marks the handles as System.IO marks handles it opened asynchronously.
        SafeFileHandleInternals.Initialize(first, "socket-0", isAsync, deleteOnClose: false, isLocked: false);
        SafeFileHandleInternals.Initialize(second, "socket-1", isAsync, deleteOnClose: false, isLocked: false);
        return (first, second);
    }

    /// <summary>A read-only and a write-only stream over one socket, so that each direction has its own buffer.</summary>
    private static (SpindleFileStream Reader, SpindleFileStream Writer) Streams(SafeFileHandle handle, StreamConfiguration configuration)
    {
        var alias = new SafeFileHandle(handle.DangerousGetHandle(), ownsHandle: false);
        SafeFileHandleInternals.Initialize(alias, "socket-alias", configuration.UseAsync, deleteOnClose: false, isLocked: false);
        return (new SpindleFileStream(handle, FileAccess.Read, configuration.BufferSize, configuration.UseAsync),
            new SpindleFileStream(alias, FileAccess.Write, configuration.BufferSize, configuration.UseAsync));
    }

    [Theory]
    [MemberData(nameof(Configurations))]
    public async Task A_socket_carries_traffic_both_ways_at_once(StreamConfiguration configuration)
    {
        (SafeFileHandle a, SafeFileHandle b) = SocketPair(configuration.UseAsync);
        (SpindleFileStream aReader, SpindleFileStream aWriter) = Streams(a, configuration);
        (SpindleFileStream bReader, SpindleFileStream bWriter) = Streams(b, configuration);
        Assert.False(aReader.CanSeek);
        Assert.Equal("socket-0", aReader.Name);

        byte[] toB = new byte[300_000];
        byte[] toA = new byte[300_000];
        new Random(2).NextBytes(toB);
        new Random(3).NextBytes(toA);
        Task sendToB = Task.Run(() => Send(aWriter, toB));
        Task sendToA = Task.Run(() => Send(bWriter, toA));
        Task<byte[]> receivedByB = Task.Run(() => Receive(bReader));
        Task<byte[]> receivedByA = Task.Run(() => Receive(aReader));

        await Task.WhenAll(sendToA, sendToB).WaitAsync(s_timeout);
        Assert.Equal(toB, await receivedByB.WaitAsync(s_timeout));
        Assert.Equal(toA, await receivedByA.WaitAsync(s_timeout));
        await aReader.DisposeAsync();
        await bReader.DisposeAsync();
    }

    private static async Task Send(SpindleFileStream writer, byte[] data)
    {
        for (int offset = 0, i = 0; offset < data.Length; i++)
        {
            int size = Math.Min(data.Length - offset, 1 + (i * 4099 % 7000));
            if (i % 3 == 0)
            {
                writer.Write(data.AsSpan(offset, size));
            }
            else
            {
                await writer.WriteAsync(data.AsMemory(offset, size));
            }
            offset += size;
        }
        await writer.FlushAsync();
        // Half-close, so that the other side sees the end of the stream.
        Assert.Equal(0, Shutdown((int)writer.SafeFileHandle.DangerousGetHandle(), 1));
    }

    [System.Runtime.InteropServices.DllImport("libc", EntryPoint = "shutdown")]
    private static extern int Shutdown(int fd, int how);

    private static async Task<byte[]> Receive(SpindleFileStream reader)
    {
        var received = new MemoryStream();
        byte[] buffer = new byte[8192];
        for (int i = 0; ; i++)
        {
            int read = i % 2 == 0 ? await reader.ReadAsync(buffer.AsMemory(0, 1 + i * 13 % buffer.Length)) : reader.Read(buffer, 0, 1 + i * 17 % buffer.Length);
            if (read == 0)
            {
                return received.ToArray();
            }
            received.Write(buffer, 0, read);
        }
    }

    [Theory]
    [InlineData(0)]
    [InlineData(4096)]
    public async Task A_pending_pipe_read_on_io_uring_can_be_cancelled_without_losing_data(int bufferSize)
    {
        if (!Spindle.Engines.EngineSelector.IsIoUringAvailable)
        {
            // Only io_uring can cancel a read that is already waiting in the kernel; the pool engines block a thread.
            return;
        }
        using var dir = new TempDirectory();
        var configuration = new StreamConfiguration(bufferSize, UseAsync: true, IoEngine.IoUring);
        (Stream reader, Stream writer) = await OpenSpindleFifoAsync(dir, configuration);
        await using (reader)
        await using (writer)
        {
            Assert.Equal(IoEngine.IoUring, ((SpindleFileStream)reader).Engine);
            byte[] buffer = new byte[16];
            using var cancellation = new CancellationTokenSource(TimeSpan.FromMilliseconds(100));
            await Assert.ThrowsAnyAsync<OperationCanceledException>(() => reader.ReadAsync(buffer, cancellation.Token).AsTask().WaitAsync(s_timeout));
            writer.Write(new byte[] { 1, 2, 3 });
            writer.Flush();
            Assert.Equal(3, await reader.ReadAsync(buffer).AsTask().WaitAsync(s_timeout));
            Assert.Equal(new byte[] { 1, 2, 3 }, buffer[..3]);
        }
    }

    [Theory]
    [MemberData(nameof(Configurations))]
    public async Task WriteAsync_on_a_pipe_is_delivered_without_a_flush_like_FileStream(StreamConfiguration configuration)
    {
        using var dir = new TempDirectory();
        foreach (bool spindle in new[] { false, true })
        {
            (Stream reader, Stream writer) = spindle
                ? await OpenSpindleFifoAsync(dir, configuration)
                : await OpenFifoAsync(dir, (path, access) => configuration.OpenSystem(path, FileMode.Open, access));
            await using (reader)
            await using (writer)
            {
                await writer.WriteAsync(new byte[] { 1, 2, 3 });
                Assert.Equal(new byte[] { 1, 2, 3 }, await ReadExactly(reader, 3));
                if (spindle)
                {
                    // Unlike System.IO, which would send the asynchronous bytes ahead of a byte still in the
                    // buffer, Spindle keeps the order.
                    writer.WriteByte(4);
                    await writer.WriteAsync(new byte[] { 5, 6 });
                    Assert.Equal(new byte[] { 4, 5, 6 }, await ReadExactly(reader, 3));
                }
            }
        }
    }

    private static async Task<byte[]> ReadExactly(Stream reader, int count)
    {
        byte[] buffer = new byte[count];
        int read = 0;
        while (read < count)
        {
            int n = await reader.ReadAsync(buffer.AsMemory(read)).AsTask().WaitAsync(s_timeout);
            Assert.True(n > 0, "unexpected end of stream");
            read += n;
        }
        return buffer;
    }

    [Theory]
    [MemberData(nameof(Configurations))]
    public async Task Character_devices_behave_like_FileStream(StreamConfiguration configuration)
    {
        foreach (string device in new[] { "/dev/null", "/dev/zero" })
        {
            await using Stream system = configuration.OpenSystem(device, FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite);
            await using Stream spindle = configuration.OpenSpindle(device, FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite);
            foreach (Func<Stream, Task<object>> step in new Func<Stream, Task<object>>[]
            {
                s => Task.FromResult<object>(s.CanSeek),
                s => Task.FromResult<object>(s.Position),
                s => Task.FromResult<object>(s.Length),
                s => { s.Write(new byte[100]); return Task.FromResult<object>(s.Position); },
                async s => { await s.WriteAsync(new byte[5000]); return s.Position; },
                s => { byte[] b = new byte[10]; b.AsSpan().Fill(7); return Task.FromResult<object>(s.Read(b) + Convert.ToHexString(b)); },
                async s => { byte[] b = new byte[9000]; return await s.ReadAsync(b) + " " + b.Sum(x => x); },
                s => Task.FromResult<object>(s.ReadByte()),
                s => Task.FromResult<object>(s.Seek(10, SeekOrigin.Begin)),
                s => { s.Flush(); return Task.FromResult<object>(s.Position); },
            })
            {
                StreamOutcome expected = await StreamOutcome.OfAsync(() => step(system));
                StreamOutcome actual = await StreamOutcome.OfAsync(() => step(spindle));
                Assert.True(expected == actual, $"{device}: System.IO {expected}, Spindle {actual}");
            }
        }
    }
}
