using Spindle.Clients.Devices.Tests;
using Spindle.Garnet;
using Tsavorite.core;
using static Spindle.Garnet.Tests.DeviceCalls;

namespace Spindle.Garnet.Tests;

/// <summary>
/// SpindleStorageDevice's own contract, side by side with Garnet's RandomAccessLocalStorageDevice where Garnet
/// defines the behaviour: writes and reads across segment boundaries give the same callbacks, bytes and files;
/// misaligned requests are refused; segments are removed and truncated; Dispose waits for reads in flight.
/// </summary>
public sealed class StorageDeviceTests
{
    private const long SegmentSize = 64 * 1024;

    [Theory]
    [InlineData(IoEngine.Auto, true)]
    [InlineData(IoEngine.IoUring, true)]
    [InlineData(IoEngine.ThreadPool, true)]
    [InlineData(IoEngine.Sync, true)]
    [InlineData(IoEngine.Auto, false)]
    public async Task WritesAndReadsAtSegmentBoundariesMatchGarnetsRandomAccessDevice(IoEngine engine, bool directIO)
    {
        using var directory = new TestDirectory();
        using var spindle = new SpindleStorageDevice(Path.Combine(directory.Sub("spindle"), "hlog"), new SpindleStorageDeviceOptions { Engine = engine, ReadEngine = engine, DirectIO = directIO });
        using var garnet = new RandomAccessLocalStorageDevice(Path.Combine(directory.Sub("garnet"), "hlog"));
        spindle.Initialize(SegmentSize);
        garnet.Initialize(SegmentSize);
        Assert.Equal(garnet.SectorSize, spindle.SectorSize); // both learned from the same file system
        uint sector = spindle.SectorSize;
        var random = new Random(33);
        using var source = new NativeBuffer(64 * 1024);

        // At each boundary of segments 0..3: the last sectors of one segment and the first of the next, as two
        // requests (Tsavorite never lets one request cross a segment); then sectors in the middle.
        var written = new List<(ulong Address, byte[] Bytes)>();
        for (int segment = 1; segment < 4; segment++)
        {
            ulong boundary = (ulong)(segment * SegmentSize);
            foreach (ulong address in new[] { boundary - (3 * sector), boundary, boundary + (SegmentSize / 2) })
            {
                uint length = 3 * sector;
                random.NextBytes(source.Span[..(int)length]);
                await ExpectWritten(spindle, source.Address, address, length);
                await ExpectWritten(garnet, source.Address, address, length);
                written.Add((address, source.Span[..(int)length].ToArray()));
            }
        }

        using var spindleRead = new NativeBuffer(64 * 1024);
        using var garnetRead = new NativeBuffer(64 * 1024);
        foreach (var (address, bytes) in written)
        {
            spindleRead.Span.Fill(0xAA);
            garnetRead.Span.Fill(0xAA);
            DeviceResult fromSpindle = await Read(spindle, address, spindleRead.Address, (uint)bytes.Length);
            DeviceResult fromGarnet = await Read(garnet, address, garnetRead.Address, (uint)bytes.Length);
            Assert.Equal(fromGarnet.Error, fromSpindle.Error);
            Assert.Equal(fromGarnet.Bytes, fromSpindle.Bytes);
            Assert.Equal((uint)bytes.Length, fromSpindle.Bytes);
            Assert.True(spindleRead.Span[..bytes.Length].SequenceEqual(bytes), $"read at {address} differs from what was written");
        }

        // A read past what a segment holds: both devices return the bytes that are there (a short read).
        ulong tailOfSegment3 = (ulong)(3 * SegmentSize) + (SegmentSize / 2) + (2 * sector);
        DeviceResult shortSpindle = await Read(spindle, tailOfSegment3, spindleRead.Address, 4 * sector);
        DeviceResult shortGarnet = await Read(garnet, tailOfSegment3, garnetRead.Address, 4 * sector);
        Assert.Equal(shortGarnet.Bytes, shortSpindle.Bytes);
        Assert.Equal(sector, shortSpindle.Bytes);

        spindle.Dispose();
        garnet.Dispose();
        for (int segment = 0; segment < 4; segment++)
        {
            byte[] expected = File.ReadAllBytes(Path.Combine(directory.Path, "garnet", $"hlog.{segment}"));
            byte[] actual = File.ReadAllBytes(Path.Combine(directory.Path, "spindle", $"hlog.{segment}"));
            Assert.True(expected.AsSpan().SequenceEqual(actual), $"segment {segment} differs on disk");
        }
    }

    [Fact]
    public void DirectIOIsTheDefaultAndTheSectorSizeIsTheFileSystemsAlignment()
    {
        using var directory = new TestDirectory();
        using var device = new SpindleStorageDevice(Path.Combine(directory.Path, "hlog"));
        device.Initialize(SegmentSize);
        using var probe = SpindleFile.OpenHandle(Path.Combine(directory.Path, "probe"), new SpindleFileOptions { Mode = FileMode.CreateNew, Access = FileAccess.ReadWrite });
        DirectIOAlignment alignment = SpindleFile.GetDirectIOAlignment(probe);
        Assert.Equal((uint)Math.Max(512, Math.Max(alignment.MemoryAlignment, alignment.OffsetAlignment)), device.SectorSize);
        Assert.True(device.IsDirectIO);
    }

    [Theory]
    [InlineData(1, 0, 0, "device address")]     // offset
    [InlineData(0, 0, 100, "length")]           // length
    [InlineData(0, 8, 0, "buffer address")]     // memory
    public void MisalignedRequestsAreRefusedWithAClearException(int offsetSectorsFraction, int memoryShift, int lengthShift, string named)
    {
        using var directory = new TestDirectory();
        using var device = new SpindleStorageDevice(Path.Combine(directory.Path, "hlog"));
        device.Initialize(SegmentSize);
        uint sector = device.SectorSize;
        using var buffer = new NativeBuffer(4 * 4096);
        ulong address = offsetSectorsFraction == 0 ? sector : sector + 7;
        uint length = lengthShift == 0 ? sector : (uint)lengthShift;
        IntPtr memory = buffer.Address + memoryShift;
        int callbacks = 0;
        var write = Assert.Throws<ArgumentException>(() => device.WriteAsync(memory, address, length, (_, _, _, _) => callbacks++, null));
        var read = Assert.Throws<ArgumentException>(() => device.ReadAsync(address, memory, length, (_, _, _, _) => callbacks++, null));
        Assert.Contains(named, write.Message);
        Assert.Contains($"sector size ({sector} bytes)", write.Message);
        Assert.Equal(write.Message, read.Message);
        Assert.Equal(0, callbacks);
        Assert.Equal(0, device.PendingOperations);
        Assert.False(File.Exists(Path.Combine(directory.Path, "hlog.0")), "a refused request must not reach the file system");
    }

    [Fact]
    public async Task RemoveSegmentAndTruncationDeleteOnlyTheirSegments()
    {
        using var directory = new TestDirectory();
        using var device = new SpindleStorageDevice(Path.Combine(directory.Path, "hlog"));
        device.Initialize(SegmentSize, new LightEpoch());
        using var buffer = new NativeBuffer(4096);
        for (int segment = 0; segment < 5; segment++)
        {
            buffer.Span.Fill((byte)(segment + 1));
            await ExpectWritten(device, buffer.Address, (ulong)(segment * SegmentSize), 4096);
        }
        string Segment(int id) => Path.Combine(directory.Path, $"hlog.{id}");

        device.RemoveSegment(0);
        var removed = new TaskCompletionSource();
        device.RemoveSegmentAsync(1, _ => removed.SetResult(), null!);
        await removed.Task;
        Assert.False(File.Exists(Segment(0)));
        Assert.False(File.Exists(Segment(1)));
        device.RemoveSegment(1); // already gone: not an error

        device.TruncateUntilAddress(3 * SegmentSize); // segments below 3
        Assert.False(File.Exists(Segment(2)));
        Assert.Equal(3, device.StartSegment);
        for (int segment = 3; segment < 5; segment++)
        {
            Assert.True(File.Exists(Segment(segment)));
            buffer.Span.Clear();
            DeviceResult result = await Read(device, (ulong)(segment * SegmentSize), buffer.Address, 4096);
            Assert.Equal(0u, result.Error);
            Assert.All(buffer.Span.ToArray(), b => Assert.Equal(segment + 1, b));
        }
    }

    [Fact]
    public async Task ARecoveredDeviceFindsItsSegmentRange()
    {
        using var directory = new TestDirectory();
        using var buffer = new NativeBuffer(4096);
        using (var device = new SpindleStorageDevice(Path.Combine(directory.Path, "hlog")))
        {
            device.Initialize(SegmentSize);
            for (int segment = 0; segment < 4; segment++)
            {
                await ExpectWritten(device, buffer.Address, (ulong)(segment * SegmentSize), 4096);
            }
            device.RemoveSegment(0);
        }
        using var recovered = new SpindleStorageDevice(Path.Combine(directory.Path, "hlog"), new SpindleStorageDeviceOptions { RecoverDevice = true });
        Assert.Equal(1, recovered.StartSegment);
        Assert.Equal(3, recovered.EndSegment);
    }

    [Fact]
    public void DisposeWithReadsInFlightWaitsForEveryCallbackAndLaterOperationsFail()
    {
        using var directory = new TestDirectory();
        // Asynchronous reads (the default Sync engine completes each read before ReadAsync returns).
        var device = new SpindleStorageDevice(Path.Combine(directory.Path, "hlog"), new SpindleStorageDeviceOptions { ReadEngine = IoEngine.Auto });
        device.Initialize(1L << 30);
        const int Count = 256;
        const int Size = 16 * 1024;
        using var buffer = new NativeBuffer(Count * Size);
        for (int i = 0; i < Count; i++)
        {
            buffer.Span.Slice(i * Size, Size).Fill((byte)(i + 1));
        }
        File.WriteAllBytes(Path.Combine(directory.Path, "hlog.0"), buffer.Span.ToArray());
        buffer.Span.Clear();

        int called = 0;
        int failed = 0;
        for (int i = 0; i < Count; i++)
        {
            device.ReadAsync((ulong)(i * Size), buffer.Address + (i * Size), Size, (error, bytes, _, _) =>
            {
                if (error != 0 || bytes != Size)
                {
                    Interlocked.Increment(ref failed);
                }
                Interlocked.Increment(ref called);
            }, null);
        }
        device.Dispose();
        // When Dispose returns, the kernel is done with every buffer and every callback has run: the memory
        // may be freed now, and it holds what the file holds.
        Assert.Equal(Count, Volatile.Read(ref called));
        Assert.Equal(0, failed);
        Assert.Equal(0, device.PendingOperations);
        for (int i = 0; i < Count; i++)
        {
            Assert.True(buffer.Span.Slice(i * Size, Size).IndexOfAnyExcept((byte)(i + 1)) < 0, $"read {i} incomplete when Dispose returned");
        }

        DeviceResult late = default;
        device.ReadAsync(0, buffer.Address, 4096, (error, bytes, _, exception) => late = new(error, bytes, exception), null);
        Assert.NotEqual(0u, late.Error);
        Assert.IsType<ObjectDisposedException>(late.Exception);
    }

    [Theory]
    [InlineData(IoEngine.Sync)]
    [InlineData(IoEngine.ThreadPool)]
    [InlineData(IoEngine.IoUring)]
    [InlineData(IoEngine.Auto)]
    public void DisposeReturnsOnlyAfterACallbackStillRunningHasReturned(IoEngine engine)
    {
        using var directory = new TestDirectory();
        File.WriteAllBytes(Path.Combine(directory.Path, "hlog.0"), new byte[4096]);
        var device = new SpindleStorageDevice(Path.Combine(directory.Path, "hlog"), new SpindleStorageDeviceOptions { ReadEngine = engine });
        device.Initialize(1L << 30);
        using var buffer = new NativeBuffer(4096);
        var outcome = CallbackDisposeRace.Run(callback => device.ReadAsync(0, buffer.Address, 4096, (_, _, _, _) => callback(), null), () => device.PendingOperations, device.Dispose);

        Assert.Equal(1, outcome.PendingInsideCallback); // counted out only after its callback returned
        Assert.False(outcome.CallbackRunningWhenDisposeReturned);
        Assert.Equal(0, device.PendingOperations);
    }

    [Fact]
    public void DisposeFromInsideACallbackWaitsForTheOtherCallbacksNotItsOwn()
    {
        // Tsavorite may dispose a device from a continuation of one of its callbacks. The reads must overlap for the
        // others to be in flight: io_uring's where the kernel allows it, else the thread pool's (Auto would read on the
        // asking thread then, one after the other).
        using var directory = new TestDirectory();
        IoEngine overlapping = SpindleRandomAccess.IsIoUringAvailable ? IoEngine.Auto : IoEngine.ThreadPool;
        var device = new SpindleStorageDevice(Path.Combine(directory.Path, "hlog"), new SpindleStorageDeviceOptions { ReadEngine = overlapping });
        device.Initialize(1L << 30);
        const int Count = 64;
        const int Size = 16 * 1024;
        File.WriteAllBytes(Path.Combine(directory.Path, "hlog.0"), new byte[Count * Size]);
        using var buffer = new NativeBuffer(Count * Size);
        using var disposed = new ManualResetEventSlim();
        using var allIssued = new ManualResetEventSlim(); // no callback disposes before every read was issued
        int returned = 0;
        int disposer = 0;
        int othersReturnedWhenDisposeReturned = -1;
        int issuer = Environment.CurrentManagedThreadId;
        for (int i = 0; i < Count; i++)
        {
            device.ReadAsync((ulong)(i * Size), buffer.Address + (i * Size), Size, (_, _, _, _) =>
            {
                if (Environment.CurrentManagedThreadId == issuer)
                {
                    // Completed before ReadAsync returned (its completion was reaped at once): the issuing thread
                    // cannot wait here for the rest to be issued, so this callback only returns.
                    Interlocked.Increment(ref returned);
                    return;
                }
                allIssued.Wait();
                if (Interlocked.Exchange(ref disposer, 1) == 0)
                {
                    device.Dispose();
                    othersReturnedWhenDisposeReturned = Volatile.Read(ref returned);
                    disposed.Set();
                }
                else
                {
                    Interlocked.Increment(ref returned);
                }
            }, null);
        }
        allIssued.Set();
        Assert.True(disposed.Wait(TimeSpan.FromMinutes(1)), "Dispose from inside a callback never returned");
        Assert.Equal(Count - 1, othersReturnedWhenDisposeReturned);
    }
}
