using System.Buffers;
using System.Runtime.CompilerServices;
using Spindle.Tests.Beyond;
using Spindle.Tests.Infrastructure;
using Xunit.Abstractions;
using static Spindle.Tests.Reliability.ReliabilityKit;

namespace Spindle.Tests.Reliability.Lifetime;

/// <summary>
/// The stacked stream layers that own a buffer (O_DIRECT window, atomic-append buffer, ordinary buffer): disposed
/// while their operations run, or forgotten. A layer's memory is released only after the kernel is done with it,
/// exactly once, and forgotten streams write what they hold, as FileStream's finalizer does.
/// </summary>
[Collection(SerialReliability.Name)]
public class LayerLifetimeTests(ITestOutputHelper output)
{
    private const int Window = 64 * 1024; // the window of a direct stream with the default buffer size

    public static IEnumerable<object[]> Engines => Enum.GetValues<IoEngine>().Select(e => new object[] { e });

    private static SpindleFileStream OpenDirect(string path, IoEngine engine, FileMode mode = FileMode.OpenOrCreate,
        FileAccess access = FileAccess.ReadWrite, int bufferSize = 4096) => new(path, new SpindleFileOptions
        {
            Mode = mode, Access = access, Options = FileOptions.Asynchronous, DirectIO = true, Engine = engine, BufferSize = bufferSize,
        });

    private static SpindleFileStream OpenAppend(string path, IoEngine engine, int bufferSize = 4096) => new(path, new SpindleFileOptions
    {
        Mode = FileMode.OpenOrCreate, Access = FileAccess.ReadWrite, Share = FileShare.ReadWrite, Options = FileOptions.Asynchronous,
        AtomicAppend = true, Engine = engine, BufferSize = bufferSize,
    });

    // One of the three layers that own a buffer, by the name the theories give it; "buffered" is the ordinary buffer.
    private static SpindleFileStream OpenLayer(string layer, string path, IoEngine engine) => layer switch
    {
        "direct" => OpenDirect(path, engine),
        "append" => OpenAppend(path, engine),
        _ => new SpindleFileStream(path, new SpindleFileOptions
        {
            Mode = FileMode.OpenOrCreate, Access = FileAccess.ReadWrite, Options = FileOptions.Asynchronous, Engine = engine, BufferSize = 4096,
        }),
    };

    /// <summary>The repro: the window is given back only after the read that fills it has ended.</summary>
    [Theory]
    [MemberData(nameof(Engines))]
    public Task Disposing_a_direct_stream_with_a_read_in_flight_never_lets_the_kernel_fill_a_reused_window(IoEngine engine) => Bounded(async () =>
    {
        using var dir = DirectIOTests.DiskDirectory();
        string source = dir.File("source");
        File.WriteAllBytes(source, Pattern(4 * Window, 1));
        int overwritten = 0, refused = 0;
        for (int trial = 0; trial < 20; trial++)
        {
            var stream = OpenDirect(source, engine, FileMode.Open, FileAccess.Read);
            Task<int> read = stream.ReadAsync(new byte[1]).AsTask();
            stream.Dispose();
            // The pool hands back the block it got last: the stream's window, if it was returned.
            using IMemoryOwner<byte> other = AlignedMemoryPool.Shared.Rent(Window);
            other.Memory.Span.Fill(0xEE);
            try
            {
                Assert.Equal(1, await read);
            }
            catch (ObjectDisposedException)
            {
                refused++;
            }
            if (other.Memory.Span.IndexOfAnyExcept((byte)0xEE) >= 0)
            {
                overwritten++;
            }
        }
        output.WriteLine($"{engine}: {overwritten} of 20 re-rented windows overwritten, {refused} reads refused after dispose");
        Assert.Equal(0, overwritten);
    });

    /// <summary>Writes and flushes in flight: what Dispose leaves on disk is what was written, never a reused window's bytes.</summary>
    [Theory]
    [MemberData(nameof(Engines))]
    public Task Disposing_a_direct_stream_with_a_write_or_flush_in_flight_writes_exactly_the_data(IoEngine engine) => Bounded(async () =>
    {
        using var dir = DirectIOTests.DiskDirectory();
        byte[] data = Pattern(3 * Window + 1000, 2);
        for (int trial = 0; trial < 20; trial++)
        {
            string path = dir.File($"f{trial}");
            var stream = OpenDirect(path, engine, FileMode.Create);
            Task pending;
            if (trial % 2 == 0)
            {
                pending = stream.WriteAsync(data).AsTask(); // fills and flushes the window three times
            }
            else
            {
                stream.Write(data);
                pending = stream.FlushAsync();
            }
            if (trial % 4 < 2)
            {
                stream.Dispose();
            }
            else
            {
                await stream.DisposeAsync();
            }
            using IMemoryOwner<byte> other = AlignedMemoryPool.Shared.Rent(Window);
            other.Memory.Span.Fill(0xEE);
            await pending;
            Assert.True(data.AsSpan().SequenceEqual(File.ReadAllBytes(path)), $"{engine}, trial {trial}: the file is not the data written");
        }
    });

    /// <summary>
    /// A synchronous read or write on one thread and Dispose on another (a race FileStream survives because its buffer
    /// is managed): the window goes back only after the call that uses it, which otherwise ends with ObjectDisposedException.
    /// </summary>
    [Fact]
    public Task Disposing_a_direct_stream_during_a_synchronous_call_on_another_thread_never_frees_the_window_under_it() => Bounded(async () =>
    {
        using var dir = DirectIOTests.DiskDirectory();
        string source = dir.File("source");
        byte[] content = Pattern(4 * Window, 6);
        File.WriteAllBytes(source, content);
        int overwritten = 0, refused = 0;
        for (int trial = 0; trial < 40; trial++)
        {
            bool write = trial % 2 == 1;
            var stream = OpenDirect(source, IoEngine.Auto, FileMode.Open);
            int go = 0;
            Task call = Task.Factory.StartNew(() =>
            {
                while (Volatile.Read(ref go) == 0)
                {
                }
                if (write)
                {
                    stream.Write(content.AsSpan(0, 3 * Window)); // flushes the window twice
                }
                else
                {
                    stream.Read(new byte[1]);
                }
            }, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default);
            Volatile.Write(ref go, 1);
            Thread.SpinWait(trial * 50);
            stream.Dispose();
            using IMemoryOwner<byte> other = AlignedMemoryPool.Shared.Rent(Window);
            other.Memory.Span.Fill(0xEE);
            try
            {
                await call;
            }
            catch (ObjectDisposedException)
            {
                refused++;
            }
            if (other.Memory.Span.IndexOfAnyExcept((byte)0xEE) >= 0)
            {
                overwritten++;
            }
            Assert.True(content.AsSpan().SequenceEqual(File.ReadAllBytes(source)), $"trial {trial}: the file changed");
        }
        output.WriteLine($"{overwritten} of 40 re-rented windows overwritten, {refused} calls refused after dispose");
        Assert.Equal(0, overwritten);
    });

    /// <summary>
    /// A buffered stream over a pipe with a read pending that only the other end can end: Dispose returns at once, as
    /// FileStream's does (waiting for the turn there could wait for ever); the read then ends when data comes.
    /// </summary>
    [Fact]
    public Task Dispose_does_not_wait_for_a_pipe_read_that_may_never_end_like_FileStream() => Bounded(async () =>
    {
        using var dir = new TempDirectory();
        for (int side = 0; side < 2; side++)
        {
            using var fifo = new Spindle.Tests.Engines.Fifo(dir.File($"fifo{side}"));
            Stream stream = side == 0
                ? new FileStream(fifo.Reader, FileAccess.Read, 4096)
                : new SpindleFileStream(fifo.Reader, FileAccess.Read, 4096);
            Task<int> read = stream.ReadAsync(new byte[10]).AsTask();
            Assert.False(read.IsCompleted); // the pipe is empty: nothing can end this read but a writer
            stream.Dispose(); // returns: the test would time out otherwise
            try
            {
                // Ends the read if it still holds the pipe open; with no reader left the pipe is broken, which is fine.
                using var writer = new FileStream(fifo.Writer, FileAccess.Write, 0);
                writer.Write("hello"u8);
            }
            catch (IOException)
            {
            }
            try
            {
                int got = await read;
                Assert.True(got is 5 or 0, $"{got} bytes");
            }
            catch (Exception e) when (e is ObjectDisposedException or IOException)
            {
            }
        }
    });

    /// <summary>With the pool's slot for the window's size full, a returned window is freed: a late read would corrupt the heap.</summary>
    [Theory]
    [MemberData(nameof(Engines))]
    public Task Disposing_a_direct_stream_with_a_read_in_flight_is_safe_when_the_window_is_freed(IoEngine engine) => Bounded(async () =>
    {
        using var dir = DirectIOTests.DiskDirectory();
        string source = dir.File("source");
        File.WriteAllBytes(source, Pattern(4 * Window, 3));
        for (int trial = 0; trial < 20; trial++)
        {
            FillPoolSlot();
            var stream = OpenDirect(source, engine, FileMode.Open, FileAccess.Read);
            FillPoolSlot(); // the window's return finds the slot full and frees the block
            Task<int> read = stream.ReadAsync(new byte[1]).AsTask();
            stream.Dispose();
            // Allocations that would reuse the freed block.
            byte[][] churn = [.. Enumerable.Range(0, 8).Select(_ => GC.AllocateUninitializedArray<byte>(Window, pinned: true))];
            try
            {
                await read;
            }
            catch (ObjectDisposedException)
            {
            }
            GC.KeepAlive(churn);
        }
        // Reaching this line without a crash of the test process is the test.
    });

    private static void FillPoolSlot()
    {
        IMemoryOwner<byte>[] owners = [.. Enumerable.Range(0, AlignedMemoryPool.BuffersKeptPerSize + 1).Select(_ => AlignedMemoryPool.Shared.Rent(Window))];
        foreach (IMemoryOwner<byte> owner in owners)
        {
            owner.Dispose();
        }
    }

    /// <summary>
    /// The Lifetime suite's dispose-with-operations-in-flight for the direct and atomic-append layers on every engine, and for
    /// the ordinary buffer (whose other cases StreamLifetimeTests has) with the bytes of acknowledged writes checked too.
    /// </summary>
    [Theory]
    [InlineData("direct", IoEngine.Auto)]
    [InlineData("direct", IoEngine.Sync)]
    [InlineData("direct", IoEngine.ThreadPool)]
    [InlineData("direct", IoEngine.IoUring)]
    [InlineData("append", IoEngine.Auto)]
    [InlineData("append", IoEngine.Sync)]
    [InlineData("append", IoEngine.ThreadPool)]
    [InlineData("append", IoEngine.IoUring)]
    [InlineData("buffered", IoEngine.Auto)]
    [InlineData("buffered", IoEngine.Sync)]
    [InlineData("buffered", IoEngine.ThreadPool)]
    [InlineData("buffered", IoEngine.IoUring)]
    public Task Disposing_a_layered_stream_with_operations_in_flight_ends_them_cleanly(string layer, IoEngine engine) => Bounded(async () =>
    {
        using var dir = DirectIOTests.DiskDirectory();
        int descriptors = OpenDescriptors();
        long outstanding = EngineCounts.Outstanding(AlignedMemoryPool.Shared);
        const int RecordLength = 1000;
        int completed = 0, refused = 0;
        for (int round = 0; round < 5; round++)
        {
            string path = dir.File($"f{round}");
            int before = Volatile.Read(ref completed);
            SpindleFileStream stream = OpenLayer(layer, path, engine);
            var written = new bool[32];
            // 32 asynchronous calls at once: the layer serialises them, as FileStream's buffered strategy does.
            Task[] pending = [.. Enumerable.Range(0, 32).Select(i => Task.Run(async () =>
            {
                try
                {
                    if (i % 2 == 0)
                    {
                        await stream.WriteAsync(Record(i));
                        written[i] = true;
                    }
                    else
                    {
                        await stream.ReadAsync(new byte[RecordLength]);
                    }
                    Interlocked.Increment(ref completed);
                }
                catch (ObjectDisposedException)
                {
                    Interlocked.Increment(ref refused);
                }
            }))];
            await UntilAsync(() => Volatile.Read(ref completed) >= before + round * 3, 5000);
            if (round % 2 == 0)
            {
                stream.Dispose();
            }
            else
            {
                await stream.DisposeAsync();
            }
            await Task.WhenAll(pending);

            // Every acknowledged write is on disk: appended records whole, positioned writes somewhere in the file.
            byte[] file = File.ReadAllBytes(path);
            for (int i = 0; i < 32; i += 2)
            {
                if (written[i])
                {
                    Assert.True(file.AsSpan().IndexOf(Record(i)) >= 0, $"{layer}/{engine}, round {round}: acknowledged record {i} is not in the file");
                }
            }
            if (layer == "append")
            {
                Assert.Equal(written.Count(w => w) * RecordLength, file.Length);
            }
        }
        AssertNoDescriptorLeak(descriptors);
        Assert.Equal(outstanding, EngineCounts.Outstanding(AlignedMemoryPool.Shared));
        output.WriteLine($"{layer}/{engine}: {completed} operations completed, {refused} refused after dispose");

        static byte[] Record(int i) => Pattern(RecordLength, 100 + i);
    });

    /// <summary>
    /// One asynchronous write against one Dispose, started together on two threads, many times over: whichever wins,
    /// a write that returned is in the file. The race is narrow (Dispose can end between a write's closed check and
    /// its turn), so each case runs it often; a correct layer passes every time.
    /// </summary>
    [Theory]
    [InlineData("buffered", IoEngine.Sync)]
    [InlineData("buffered", IoEngine.Auto)]
    [InlineData("append", IoEngine.Sync)]
    [InlineData("direct", IoEngine.Auto)]
    public Task A_write_acknowledged_while_another_thread_disposes_the_stream_is_in_the_file(string layer, IoEngine engine) => Bounded(() =>
    {
        using var dir = DirectIOTests.DiskDirectory();
        byte[] record = Pattern(1000, 7);
        int acknowledged = 0, refused = 0;
        for (int trial = 0; trial < 1000; trial++)
        {
            string path = dir.File($"f{trial % 4}");
            File.Delete(path);
            SpindleFileStream stream = OpenLayer(layer, path, engine);
            int ready = 0;
            bool written = false;
            var writer = new Thread(() =>
            {
                Interlocked.Increment(ref ready);
                while (Volatile.Read(ref ready) < 2) { }
                try
                {
                    stream.WriteAsync(record).AsTask().GetAwaiter().GetResult();
                    written = true;
                }
                catch (ObjectDisposedException)
                {
                }
            });
            writer.Start();
            Interlocked.Increment(ref ready);
            while (Volatile.Read(ref ready) < 2) { }
            stream.Dispose();
            writer.Join();

            byte[] file = File.ReadAllBytes(path);
            if (written)
            {
                acknowledged++;
                Assert.True(file.AsSpan().IndexOf(record) >= 0, $"trial {trial}: the acknowledged write is not in the file ({file.Length} bytes)");
            }
            else
            {
                refused++;
            }
        }
        output.WriteLine($"{layer}/{engine}: {acknowledged} writes acknowledged, {refused} refused");
        return Task.CompletedTask;
    });

    [Fact]
    public Task Forgotten_direct_and_atomic_append_streams_are_flushed_by_their_finalizers_like_FileStream() => Bounded(() =>
    {
        using var dir = DirectIOTests.DiskDirectory();
        int descriptors = OpenDescriptors();
        WriteAndForget(dir);
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
        byte[] expected = File.ReadAllBytes(dir.File("system"));
        Assert.Equal(100, expected.Length); // FileStream's finalizer flushed its buffer...
        Assert.Equal(expected, File.ReadAllBytes(dir.File("direct"))); // ...and so did Spindle's layers
        Assert.Equal(expected, File.ReadAllBytes(dir.File("append")));
        Assert.Equal(expected, File.ReadAllBytes(dir.File("direct-unbuffered")));
        AssertNoDescriptorLeak(descriptors);
        return Task.CompletedTask;
    });

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void WriteAndForget(TempDirectory dir)
    {
        byte[] data = Pattern(100, 7);
        new FileStream(dir.File("system"), FileMode.Create, FileAccess.Write, FileShare.ReadWrite, 4096).Write(data);
        OpenDirect(dir.File("direct"), IoEngine.Auto, FileMode.Create).Write(data);
        OpenDirect(dir.File("direct-unbuffered"), IoEngine.Auto, FileMode.Create, bufferSize: 0).Write(data);
        OpenAppend(dir.File("append"), IoEngine.Auto).Write(data);
    }

    /// <summary>200 direct streams forgotten, or whose handle was disposed first: every window goes back to the pool.</summary>
    [Fact]
    public Task Direct_streams_return_their_window_in_every_path() => Bounded(() =>
    {
        using var dir = DirectIOTests.DiskDirectory();
        int descriptors = OpenDescriptors();
        Collect();
        long before = EngineCounts.Outstanding(AlignedMemoryPool.Shared);
        for (int i = 0; i < 200; i++)
        {
            Forget(dir.File($"f{i % 4}"), i % 3);
        }
        Collect();
        Assert.Equal(before, EngineCounts.Outstanding(AlignedMemoryPool.Shared));
        AssertNoDescriptorLeak(descriptors);
        return Task.CompletedTask;

        static void Collect()
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
    });

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void Forget(string path, int how)
    {
        SpindleFileStream stream = OpenDirect(path, IoEngine.Auto, FileMode.Create);
        stream.Write(Pattern(100, how));
        if (how >= 1)
        {
            stream.SafeFileHandle.Dispose(); // the handle goes first...
        }
        if (how == 2)
        {
            stream.Dispose(); // ...then the stream is disposed (or, for how == 1, forgotten)
        }
    }

    /// <summary>
    /// The kernel copy of CopyToAsync runs on the pool with the descriptors as numbers: disposing the streams
    /// meanwhile must not let it copy into a file opened after (which may get the same descriptor number).
    /// </summary>
    [Fact]
    public Task Disposing_the_streams_of_a_running_CopyToAsync_never_lets_it_write_into_another_file() => Bounded(async () =>
    {
        using var dir = DirectIOTests.DiskDirectory();
        int descriptors = OpenDescriptors();
        byte[] content = Pattern(8 << 20, 5);
        File.WriteAllBytes(dir.File("source"), content);
        for (int trial = 0; trial < 10; trial++)
        {
            var source = new SpindleFileStream(dir.File("source"), FileMode.Open, FileAccess.Read, FileShare.ReadWrite, 4096, FileOptions.Asynchronous);
            var destination = new FileStream(dir.File($"copy{trial}"), FileMode.Create, FileAccess.ReadWrite, FileShare.ReadWrite);
            Task copy = source.CopyToAsync(destination);
            source.Dispose();
            destination.Dispose();
            // New files take the lowest free descriptor numbers: those the streams just gave up.
            var bystanders = Enumerable.Range(0, 4).Select(i => new FileStream(dir.File($"bystander{trial}-{i}"), FileMode.Create, FileAccess.ReadWrite)).ToList();
            try
            {
                await copy;
            }
            catch (ObjectDisposedException)
            {
            }
            foreach (FileStream bystander in bystanders)
            {
                Assert.Equal(0, bystander.Length);
                bystander.Dispose();
            }
            byte[] copied = File.ReadAllBytes(dir.File($"copy{trial}"));
            Assert.True(content.AsSpan(0, copied.Length).SequenceEqual(copied), "the copy is not a prefix of the source");
        }
        AssertNoDescriptorLeak(descriptors);
    });
}
