using Spindle.Engines;
using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Engines.FastPath;
using Spindle.Engines.IoUring;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Engines;

/// <summary>
/// The router's rows for handles io_uring serves badly or not at all: memory-backed storage (a system
/// call on the caller's thread), O_NONBLOCK pipes and epoll descriptors (fail at once, as System.IO),
/// and anonymous inodes (may wait for ever: never in the lane of regular files).
/// </summary>
[Collection(SerialCollection.Name)]
public partial class RoutingTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    [LibraryImport("libc", EntryPoint = "eventfd", SetLastError = true)]
    private static partial int EventFd(uint initialValue, int flags);

    [LibraryImport("libc", EntryPoint = "epoll_create1", SetLastError = true)]
    private static partial int EpollCreate(int flags);

    private const int CloseOnExec = 0x80000;

    [Fact]
    public async Task Direct_io_on_tmpfs_is_a_system_call_on_the_callers_thread_not_a_ring_submission()
    {
        using TmpfsMount? tmpfs = TmpfsMount.TryMount("8m", out string reason);
        if (tmpfs is null || !SpindleRandomAccess.IsIoUringAvailable)
        {
            Console.WriteLine($"skipped: {(tmpfs is null ? reason : IoUringEngine.UnavailableReason)}");
            return;
        }
        byte[] data = new byte[8192];
        Random.Shared.NextBytes(data);
        File.WriteAllBytes(tmpfs.File("data"), data);
        SafeFileHandle handle;
        try
        {
            handle = SpindleFile.OpenHandle(tmpfs.File("data"), new SpindleFileOptions { Mode = FileMode.Open, Access = FileAccess.ReadWrite, DirectIO = true });
        }
        catch (IOException e)
        {
            Console.WriteLine($"skipped: this kernel's tmpfs refuses O_DIRECT ({e.Message})");
            return;
        }
        using (handle)
        using (System.Buffers.IMemoryOwner<byte> owner = AlignedMemoryPool.Shared.Rent(4096))
        {
            Memory<byte> memory = owner.Memory[..4096];
            Assert.True(SpindleFile.IsDirectIO(handle));
            Assert.True(HandleFacts.Of(handle).SynchronousBackend);
            long placed = EngineCounts.SharedRingPlacements;
            ValueTask<int> read = SpindleRandomAccess.ReadAsync(handle, memory, 4096, IoEngine.IoUring);
            Assert.True(read.IsCompletedSuccessfully); // done on this thread
            Assert.Equal(4096, await read);
            Assert.Equal(data[4096..], memory.ToArray());
            memory.Span.Fill(7);
            ValueTask write = SpindleRandomAccess.WriteAsync(handle, memory, 0, IoEngine.IoUring);
            Assert.True(write.IsCompletedSuccessfully);
            await write;
            Assert.Equal(placed, EngineCounts.SharedRingPlacements);
        }
        Assert.All(File.ReadAllBytes(tmpfs.File("data"))[..4096], b => Assert.Equal(7, b));
    }

    [Fact]
    public async Task A_read_on_an_O_NONBLOCK_pipe_fails_at_once_on_io_uring_as_System_IO()
    {
        if (!SpindleRandomAccess.IsIoUringAvailable)
        {
            Console.WriteLine($"skipped: {IoUringEngine.UnavailableReason}");
            return;
        }
        var (reader, writer) = TestLibc.CreatePipe(nonBlocking: true);
        using (reader)
        using (writer)
        {
            // io_uring ignores O_NONBLOCK and waits for data; read(2) meets EAGAIN at once.
            Exception? actual = await Record(() => SpindleRandomAccess.ReadAsync(reader, new byte[4], 0, IoEngine.IoUring).AsTask().WaitAsync(Timeout));
            Assert.IsAssignableFrom<IOException>(actual);
        }
    }

    [Theory]
    [InlineData(IoEngine.IoUring)]
    [InlineData(IoEngine.ThreadPool)]
    [InlineData(IoEngine.Sync)]
    public async Task A_read_on_an_epoll_descriptor_fails_at_once_as_read_2_does(IoEngine engine)
    {
        EngineCases.ReportIoUring(engine);
        int fd = EpollCreate(CloseOnExec);
        Assert.True(fd >= 0);
        using var epoll = new SafeFileHandle(fd, ownsHandle: true);
        // read(2) on an epoll descriptor fails with EINVAL; io_uring never completes the read.
        Exception? actual = await Record(() => SpindleRandomAccess.ReadAsync(epoll, new byte[8], 0, engine).AsTask().WaitAsync(Timeout));
        Assert.IsAssignableFrom<IOException>(actual);
    }

    [Fact]
    public async Task Idle_reads_on_an_eventfd_beyond_the_regular_lane_never_hold_up_a_file_read()
    {
        if (PrivateEngine.Create() is not IoUringEngine engine)
        {
            Console.WriteLine($"skipped: {IoUringEngine.UnavailableReason}");
            return;
        }
        int fd = EventFd(0, CloseOnExec);
        Assert.True(fd >= 0);
        using var eventFd = new SafeFileHandle(fd, ownsHandle: true);
        using var dir = new TempDirectory();
        File.WriteAllBytes(dir.File("data"), new byte[4096]);
        using SafeFileHandle file = File.OpenHandle(dir.File("data"), FileMode.Open, FileAccess.Read);
        using var cancel = new CancellationTokenSource();
        // More idle reads than the lane of regular files has room for (the CQ ring less the other lane and the reserve).
        int idleCount = engine.Thread.BlockingBudget + 100;
        var idle = new Task<int>[idleCount];
        for (int i = 0; i < idleCount; i++)
        {
            idle[i] = engine.ReadAsync(eventFd, new byte[8], 0, useFastPath: false, cancel.Token).AsTask();
        }
        try
        {
            Assert.Equal(4096, await engine.ReadAsync(file, new byte[4096], 0, useFastPath: false, CancellationToken.None).AsTask().WaitAsync(Timeout));
            Assert.DoesNotContain(idle, t => t.IsCompleted);
        }
        finally
        {
            cancel.Cancel();
        }
        foreach (Task<int> task in idle)
        {
            await Assert.ThrowsAnyAsync<OperationCanceledException>(() => task.WaitAsync(Timeout));
        }
    }

    [Fact]
    public async Task The_meter_names_the_mechanism_that_ran_each_operation()
    {
        if (!SpindleRandomAccess.IsIoUringAvailable)
        {
            Console.WriteLine($"skipped: {IoUringEngine.UnavailableReason}");
            return;
        }
        var seen = new List<(string? Engine, string? Mechanism)>();
        using var listener = new System.Diagnostics.Metrics.MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == "Spindle" && instrument.Name == "spindle.io.operations")
            {
                l.EnableMeasurementEvents(instrument);
            }
        };
        listener.SetMeasurementEventCallback<long>((_, _, tags, _) =>
        {
            string? engine = null, mechanism = null;
            foreach (KeyValuePair<string, object?> tag in tags)
            {
                engine = tag.Key == "spindle.engine" ? (string?)tag.Value : engine;
                mechanism = tag.Key == "spindle.io.mechanism" ? (string?)tag.Value : mechanism;
            }
            lock (seen)
            {
                seen.Add((engine, mechanism));
            }
        });
        listener.Start();
        using var dir = new TempDirectory();
        using SafeFileHandle file = File.OpenHandle(dir.File("data"), FileMode.Create, FileAccess.ReadWrite);
        await SpindleRandomAccess.WriteAsync(file, new byte[100], 0, IoEngine.IoUring);        // a copy into the page cache
        using (HeldFileRequest.Hold())
        {
            await IoUringEngine.Instance!.ReadAsync(file, new byte[100], 0, useFastPath: false, CancellationToken.None); // the ring, as others are in flight
        }
        SpindleRandomAccess.Read(file, new byte[100], 0);                                     // a system call here
        lock (seen)
        {
            Assert.Contains(("iouring", "fastpath"), seen);
            Assert.Contains(("iouring", "ring"), seen);
            Assert.Contains(("sync", "inline"), seen);
        }
    }

    private static async Task<Exception?> Record(Func<Task> action)
    {
        try
        {
            await action();
            return null;
        }
        catch (Exception e)
        {
            return e;
        }
    }
}
