using Spindle.Clients.Devices.Tests;
using System.Runtime.InteropServices;
using FASTER.core;
using Spindle.Faster;

namespace Spindle.Clients.Tests;

/// <summary>
/// SpindleDevice against FASTER's ManagedLocalStorageDevice: the same aligned writes and reads across
/// segments give the same callbacks, the same bytes read and the same files.
/// </summary>
public sealed class FasterDeviceTests
{
    private const long SegmentSize = 1 << 20;
    private const int Segments = 4;
    private const int MaxSectors = 32;

    [Theory]
    [MemberData(nameof(Engines.AllWithDirectIO), MemberType = typeof(Engines))]
    public async Task RandomAlignedWritesAndReadsAcrossSegmentsMatchManagedDevice(IoEngine engine, bool directIO)
    {
        using var directory = new TestDirectory();
        using var spindle = new SpindleDevice(Path.Combine(directory.Sub("spindle"), "device"), new SpindleDeviceOptions { Engine = engine, DirectIO = directIO });
        using var managed = new ManagedLocalStorageDevice(Path.Combine(directory.Sub("managed"), "device"));
        spindle.Initialize(SegmentSize);
        managed.Initialize(SegmentSize);
        Assert.Equal(directIO, spindle.IsDirectIO);
        uint sector = Math.Max(spindle.SectorSize, managed.SectorSize);
        int maxLength = MaxSectors * (int)sector;
        var random = new Random(13);

        // What the files must hold: every write applied in order (writes in flight never overlap).
        var model = new byte[Segments][];
        var lengths = new long[Segments];
        for (int segment = 0; segment < Segments; segment++)
        {
            model[segment] = new byte[SegmentSize];
        }
        using var source = new NativeBuffer(maxLength * 16, (int)sector);
        for (int round = 0; round < 40; round++)
        {
            // Up to 16 writes in flight at once, each to its own slot of a segment (no two overlap).
            int writes = random.Next(1, 17);
            var pending = new List<Task>();
            random.NextBytes(source.Span);
            for (int w = 0; w < writes; w++)
            {
                int segment = random.Next(Segments);
                long slot = SegmentSize / 16 * w;
                long offset = slot + (random.Next((int)(SegmentSize / 16 - maxLength) / (int)sector) * sector);
                uint length = (uint)(random.Next(1, MaxSectors + 1) * sector);
                ulong address = (ulong)(segment * SegmentSize + offset);
                IntPtr memory = source.Address + (w * maxLength);
                pending.Add(ExpectWritten(spindle, memory, address, length));
                pending.Add(ExpectWritten(managed, memory, address, length));
                source.Span.Slice(w * maxLength, (int)length).CopyTo(model[segment].AsSpan((int)offset));
                lengths[segment] = Math.Max(lengths[segment], offset + length);
            }
            await Task.WhenAll(pending);
        }

        using var spindleRead = new NativeBuffer(maxLength, (int)sector);
        using var managedRead = new NativeBuffer(maxLength, (int)sector);
        for (int read = 0; read < 400; read++)
        {
            int segment = random.Next(Segments);
            long offset = random.Next((int)((SegmentSize - maxLength) / sector)) * sector;
            uint length = (uint)(random.Next(1, MaxSectors + 1) * sector);
            ulong address = (ulong)(segment * SegmentSize + offset);
            spindleRead.Span.Fill(0xAA);
            managedRead.Span.Fill(0xAA);
            var (spindleError, spindleBytes) = await Read(spindle, address, spindleRead.Address, length);
            var (managedError, managedBytes) = await Read(managed, address, managedRead.Address, length);
            Assert.Equal(managedError, spindleError);
            Assert.Equal(managedBytes, spindleBytes); // short near the end of a segment file
            int expected = (int)Math.Clamp(lengths[segment] - offset, 0, length);
            Assert.Equal((uint)expected, spindleBytes);
            Assert.True(spindleRead.Span[..expected].SequenceEqual(model[segment].AsSpan((int)offset, expected)), $"read {read} at {address} differs from what was written");
            Assert.True(spindleRead.Span[..expected].SequenceEqual(managedRead.Span[..expected]), $"read {read} at {address} differs from the managed device");
        }

        spindle.Dispose();
        managed.Dispose();
        for (int segment = 0; segment < Segments; segment++)
        {
            byte[] expected = File.ReadAllBytes(Path.Combine(directory.Path, "managed", $"device.{segment}"));
            byte[] actual = File.ReadAllBytes(Path.Combine(directory.Path, "spindle", $"device.{segment}"));
            Assert.Equal(expected.Length, actual.Length);
            Assert.True(expected.AsSpan().SequenceEqual(actual), $"segment {segment} differs on disk");
        }
    }

    [Theory]
    [MemberData(nameof(Engines.AllWithDirectIO), MemberType = typeof(Engines))]
    public async Task MisalignedRequestsFromFasterMetadataStillReachTheFile(IoEngine engine, bool directIO)
    {
        // FASTER's commit and checkpoint managers hand devices buffers at arbitrary addresses; O_DIRECT
        // cannot take them, so the device serves them through a buffered handle on the same file.
        using var directory = new TestDirectory();
        using var device = new SpindleDevice(Path.Combine(directory.Path, "device"), new SpindleDeviceOptions { Engine = engine, DirectIO = directIO });
        device.Initialize(SegmentSize);
        using var buffer = new NativeBuffer(3 * 4096, 4096);
        buffer.Span.Fill(7);
        await ExpectWritten(device, buffer.Address, 0, 8192);

        buffer.Span.Fill(9);
        await ExpectWritten(device, buffer.Address + 1, 4096, 4096); // misaligned address
        await ExpectWritten(device, buffer.Address, 100, 10);         // misaligned offset and length

        using var read = new NativeBuffer(8192, 4096);
        var (error, bytes) = await Read(device, 0, read.Address, 8192); // aligned: the direct handle sees the buffered writes
        Assert.Equal(0u, error);
        Assert.Equal(8192u, bytes);
        byte[] expected = new byte[8192];
        expected.AsSpan().Fill(7);
        expected.AsSpan(4096).Fill(9);
        expected.AsSpan(100, 10).Fill(9);
        Assert.True(read.Span.SequenceEqual(expected));

        (error, bytes) = await Read(device, 4097, read.Address + 3, 5); // misaligned read
        Assert.Equal(0u, error);
        Assert.Equal(5u, bytes);
        Assert.True(read.Span.Slice(3, 5).SequenceEqual(expected.AsSpan(4097, 5)));
        // An operation counts out only after its callback has returned, and the awaits above resume as soon as the
        // callback signals: the last one may still be on its way out.
        Assert.True(SpinWait.SpinUntil(() => device.PendingOperations == 0, TimeSpan.FromSeconds(30)), $"{device.PendingOperations} operations still pending");
    }

    [Theory]
    [MemberData(nameof(Engines.AllWithDirectIO), MemberType = typeof(Engines))]
    public void DisposeWaitsForEveryOperationInFlightAndLaterOperationsFail(IoEngine engine, bool directIO)
    {
        using var directory = new TestDirectory();
        var device = new SpindleDevice(Path.Combine(directory.Path, "device"), new SpindleDeviceOptions { Engine = engine, DirectIO = directIO });
        device.Initialize(SegmentSize);
        const int Count = 200;
        using var buffer = new NativeBuffer(Count * 4096, 4096);
        for (int i = 0; i < Count; i++)
        {
            buffer.Span.Slice(i * 4096, 4096).Fill((byte)(i + 1));
        }
        using var callbacks = new CountdownEvent(Count);
        int failed = 0;
        for (int i = 0; i < Count; i++)
        {
            device.WriteAsync(buffer.Address + (i * 4096), (ulong)(i * 4096L), 4096, (error, _, _) =>
            {
                if (error != 0)
                {
                    Interlocked.Increment(ref failed);
                }
                callbacks.Signal();
            }, null);
        }
        device.Dispose();
        // When Dispose returns the kernel is done with every write: all 200 are in the file.
        byte[] file = File.ReadAllBytes(Path.Combine(directory.Path, "device.0"));
        Assert.Equal(Count * 4096, file.Length);
        for (int i = 0; i < Count; i++)
        {
            Assert.All(file.AsSpan(i * 4096, 4096).ToArray(), b => Assert.Equal((byte)(i + 1), b));
        }
        Assert.True(callbacks.Wait(TimeSpan.FromMinutes(1)), "a callback was never called");
        Assert.Equal(0, failed);

        uint lateError = 0;
        device.WriteAsync(buffer.Address, 0, 4096, (error, _, _) => lateError = error, null);
        Assert.NotEqual(0u, lateError);
    }

    [Theory]
    [MemberData(nameof(Engines.All), MemberType = typeof(Engines))]
    public void DisposeReturnsOnlyAfterACallbackStillRunningHasReturned(IoEngine engine)
    {
        using var directory = new TestDirectory();
        File.WriteAllBytes(Path.Combine(directory.Path, "device.0"), new byte[4096]);
        var device = new SpindleDevice(Path.Combine(directory.Path, "device"), new SpindleDeviceOptions { Engine = engine });
        device.Initialize(SegmentSize);
        using var buffer = new NativeBuffer(4096, 4096);
        var outcome = CallbackDisposeRace.Run(callback => device.ReadAsync(0, 0, buffer.Address, 4096, (_, _, _) => callback(), null!), () => device.PendingOperations, device.Dispose);

        Assert.Equal(1, outcome.PendingInsideCallback); // counted out only after its callback returned
        Assert.False(outcome.CallbackRunningWhenDisposeReturned);
        Assert.Equal(0, device.PendingOperations);
    }

    [Theory]
    [MemberData(nameof(Engines.All), MemberType = typeof(Engines))]
    public async Task RemoveSegmentDeletesItsFileAndKeepsTheOthers(IoEngine engine)
    {
        using var directory = new TestDirectory();
        using var device = new SpindleDevice(Path.Combine(directory.Path, "device"), new SpindleDeviceOptions { Engine = engine, PreallocateFile = true });
        device.Initialize(SegmentSize);
        using var buffer = new NativeBuffer(4096, 4096);
        for (int segment = 0; segment < 3; segment++)
        {
            buffer.Span.Fill((byte)(segment + 1));
            await ExpectWritten(device, buffer.Address, (ulong)(segment * SegmentSize), 4096);
        }
        Assert.Equal(SegmentSize, device.GetFileSize(0));
        // Preallocation reserves the segment's blocks but keeps the visible size.
        Assert.Equal(4096, new FileInfo(Path.Combine(directory.Path, "device.1")).Length);

        device.RemoveSegment(0);
        var done = new TaskCompletionSource();
        device.RemoveSegmentAsync(1, _ => done.SetResult(), null!);
        await done.Task;
        Assert.False(File.Exists(Path.Combine(directory.Path, "device.0")));
        Assert.False(File.Exists(Path.Combine(directory.Path, "device.1")));

        buffer.Span.Clear();
        var (error, bytes) = await Read(device, (ulong)(2 * SegmentSize), buffer.Address, 4096);
        Assert.Equal(0u, error);
        Assert.Equal(4096u, bytes);
        Assert.All(buffer.Span.ToArray(), b => Assert.Equal(3, b));
    }

    [Fact]
    public async Task UnsegmentedDeviceReportsTheFileLength()
    {
        using var directory = new TestDirectory();
        using var device = new SpindleDevice(Path.Combine(directory.Path, "device"));
        device.Initialize(-1);
        using var buffer = new NativeBuffer(3 * 4096, 4096);
        await ExpectWritten(device, buffer.Address, 0, 3 * 4096);
        Assert.Equal(3 * 4096, device.GetFileSize(0));
    }

    private static async Task ExpectWritten(IDevice device, IntPtr source, ulong address, uint length)
    {
        var (error, bytes) = await Write(device, source, address, length);
        Assert.Equal(0u, error);
        Assert.Equal(length, bytes);
    }

    private static Task<(uint Error, uint Bytes)> Write(IDevice device, IntPtr source, ulong address, uint length)
    {
        var completion = new TaskCompletionSource<(uint, uint)>(TaskCreationOptions.RunContinuationsAsynchronously);
        device.WriteAsync(source, address, length, (error, bytes, context) => ((TaskCompletionSource<(uint, uint)>)context).SetResult((error, bytes)), completion);
        return completion.Task;
    }

    private static Task<(uint Error, uint Bytes)> Read(IDevice device, ulong address, IntPtr destination, uint length)
    {
        var completion = new TaskCompletionSource<(uint, uint)>(TaskCreationOptions.RunContinuationsAsynchronously);
        device.ReadAsync(address, destination, length, (error, bytes, context) => ((TaskCompletionSource<(uint, uint)>)context).SetResult((error, bytes)), completion);
        return completion.Task;
    }
}
