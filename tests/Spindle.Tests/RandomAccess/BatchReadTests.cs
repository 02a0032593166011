using System.Buffers;
using Microsoft.Win32.SafeHandles;
using Spindle.Engines;
using Spindle.Engines.FastPath;
using Spindle.Engines.IoUring;
using Spindle.Tests.Engines;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.RandomAccess;

/// <summary>ReadBatchAsync/ReadBatch: per request the same result as System.IO's RandomAccess.ReadAsync, on every engine.</summary>
public class BatchReadTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    public static TheoryData<IoEngine> Engines => new() { IoEngine.Auto, IoEngine.Sync, IoEngine.ThreadPool, IoEngine.IoUring };

    private static byte[] Data(int length, int seed)
    {
        var data = new byte[length];
        new Random(seed).NextBytes(data);
        return data;
    }

    [Theory]
    [MemberData(nameof(Engines))]
    public async Task Every_request_gets_what_System_IO_ReadAsync_gives_it_across_several_handles(IoEngine engine)
    {
        EngineCases.ReportIoUring(engine);
        using var dir = new TempDirectory();
        File.WriteAllBytes(dir.File("a"), Data(300_000, 1));
        File.WriteAllBytes(dir.File("b"), Data(5_000, 2));
        File.WriteAllBytes(dir.File("w"), Data(100, 3));
        using SafeFileHandle a = SpindleFile.OpenHandle(dir.File("a"), FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
        using SafeFileHandle b = SpindleFile.OpenHandle(dir.File("b"), FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
        using SafeFileHandle writeOnly = SpindleFile.OpenHandle(dir.File("w"), FileMode.Open, FileAccess.Write, FileShare.ReadWrite);
        using SafeFileHandle systemA = File.OpenHandle(dir.File("a"), FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
        using SafeFileHandle systemB = File.OpenHandle(dir.File("b"), FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
        using SafeFileHandle systemWriteOnly = File.OpenHandle(dir.File("w"), FileMode.Open, FileAccess.Write, FileShare.ReadWrite);

        var random = new Random(42);
        for (int round = 0; round < 20; round++)
        {
            int count = random.Next(1, 70);
            var requests = new BatchReadRequest[count];
            var expected = new (SafeFileHandle Handle, byte[] Buffer, long Offset)[count];
            for (int i = 0; i < count; i++)
            {
                int which = random.Next(10);
                (SafeFileHandle ours, SafeFileHandle theirs, long size) = which switch
                {
                    < 6 => (a, systemA, 300_000L),
                    < 9 => (b, systemB, 5_000L),
                    _ => (writeOnly, systemWriteOnly, 100L),
                };
                long offset = random.Next(3) == 0 ? random.NextInt64(size - 10, size + 5000) : random.NextInt64(0, size);
                int length = random.Next(5) == 0 ? 0 : random.Next(1, 70_000);
                requests[i] = new BatchReadRequest(ours, new byte[length], offset);
                expected[i] = (theirs, new byte[length], offset);
            }
            var results = new BatchReadResult[count];
            await SpindleRandomAccess.ReadBatchAsync(requests, results, engine).AsTask().WaitAsync(Timeout);
            await AssertAsSystemIOReads(expected, requests, results, "");

            // The synchronous form gives the same results.
            var syncResults = new BatchReadResult[count];
            SpindleRandomAccess.ReadBatch(requests, syncResults);
            for (int i = 0; i < count; i++)
            {
                Assert.Equal(results[i].BytesRead, syncResults[i].BytesRead);
                Assert.Equal(results[i].Exception?.GetType(), syncResults[i].Exception?.GetType());
            }
        }
    }

    [Theory]
    [MemberData(nameof(Engines))]
    public async Task A_bad_request_throws_before_any_read_and_fills_no_buffer(IoEngine engine)
    {
        using var dir = new TempDirectory();
        File.WriteAllBytes(dir.File("a"), Data(10_000, 4));
        using SafeFileHandle a = SpindleFile.OpenHandle(dir.File("a"), FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
        SafeFileHandle closed = SpindleFile.OpenHandle(dir.File("a"), FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
        closed.Dispose();
        byte[] first = new byte[100];
        Array.Fill(first, (byte)0xAA);

        Assert.Throws<ArgumentOutOfRangeException>(() => { _ = SpindleRandomAccess.ReadBatchAsync(new[] { new BatchReadRequest(a, first, 0), new BatchReadRequest(a, new byte[1], -1) }, new BatchReadResult[2], engine); });
        Assert.Throws<ArgumentNullException>(() => { _ = SpindleRandomAccess.ReadBatchAsync(new[] { new BatchReadRequest(a, first, 0), new BatchReadRequest(null!, new byte[1], 0) }, new BatchReadResult[2], engine); });
        Assert.Throws<ObjectDisposedException>(() => { _ = SpindleRandomAccess.ReadBatchAsync(new[] { new BatchReadRequest(a, first, 0), new BatchReadRequest(closed, new byte[1], 0) }, new BatchReadResult[2], engine); });
        Assert.Throws<ArgumentException>(() => { _ = SpindleRandomAccess.ReadBatchAsync(new[] { new BatchReadRequest(a, first, 0), new BatchReadRequest(a, first, 0) }, new BatchReadResult[1], engine); });
        Assert.All(first, x => Assert.Equal(0xAA, x));

        // An empty batch completes at once.
        await SpindleRandomAccess.ReadBatchAsync(ReadOnlyMemory<BatchReadRequest>.Empty, Memory<BatchReadResult>.Empty, engine);
    }

    [Theory]
    [MemberData(nameof(Engines))]
    public async Task O_DIRECT_alignment_is_checked_for_every_request_before_anything_is_read(IoEngine engine)
    {
        using var dir = new TempDirectory(AppContext.BaseDirectory); // a disk: tmpfs may refuse O_DIRECT
        string path = dir.File("direct");
        File.WriteAllBytes(path, Data(1 << 20, 5));
        using SafeFileHandle handle = SpindleFile.OpenHandle(path, new SpindleFileOptions { Mode = FileMode.Open, Access = FileAccess.Read, DirectIO = true });
        using SafeFileHandle system = File.OpenHandle(path);
        int block = SpindleFile.GetDirectIOAlignment(handle).OffsetAlignment;
        using IMemoryOwner<byte> owner = AlignedMemoryPool.Shared.Rent(33 * 4096);
        Memory<byte> memory = owner.Memory;
        memory.Span.Fill(0xAA);

        var requests = new BatchReadRequest[32];
        for (int i = 0; i < 32; i++)
        {
            requests[i] = new BatchReadRequest(handle, memory.Slice(i * 4096, 4096), (long)((i * 7919) % 255) * 4096);
        }
        // The last request is misaligned: nothing may be read, not even the aligned ones before it.
        requests[31] = new BatchReadRequest(handle, memory.Slice(31 * 4096, 4096), block / 2 == 0 ? 1 : block / 2);
        ArgumentException error = Assert.ThrowsAny<ArgumentException>(() => { _ = SpindleRandomAccess.ReadBatchAsync(requests, new BatchReadResult[32], engine); });
        Assert.Contains(block.ToString(System.Globalization.CultureInfo.InvariantCulture), error.Message);
        Assert.All(memory.ToArray(), x => Assert.Equal(0xAA, x));

        requests[31] = new BatchReadRequest(handle, memory.Slice(31 * 4096, 4096), (1 << 20) - 4096);
        var results = new BatchReadResult[32];
        await SpindleRandomAccess.ReadBatchAsync(requests, results, engine).AsTask().WaitAsync(Timeout);
        for (int i = 0; i < 32; i++)
        {
            byte[] expected = new byte[4096];
            Assert.Equal(4096, System.IO.RandomAccess.Read(system, expected, requests[i].FileOffset));
            Assert.True(results[i].Succeeded, results[i].Exception?.ToString());
            Assert.Equal(4096, results[i].BytesRead);
            Assert.Equal(expected, requests[i].Buffer.ToArray());
        }
    }

    [Theory]
    [MemberData(nameof(Engines))]
    public async Task A_token_cancelled_before_the_call_reads_nothing(IoEngine engine)
    {
        using var dir = new TempDirectory();
        File.WriteAllBytes(dir.File("a"), Data(1000, 6));
        using SafeFileHandle a = SpindleFile.OpenHandle(dir.File("a"), FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
        byte[] buffer = new byte[10];
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () =>
            await SpindleRandomAccess.ReadBatchAsync(new[] { new BatchReadRequest(a, buffer, 0) }, new BatchReadResult[1], engine, new CancellationToken(true)));
        Assert.All(buffer, x => Assert.Equal(0, x));
    }

    [Fact]
    public async Task Cancelling_a_running_batch_cancels_its_waiting_reads_and_keeps_the_finished_ones()
    {
        if (!EngineCases.ReportIoUring(IoEngine.IoUring))
        {
            return; // a blocking pipe read on a pool thread cannot be interrupted
        }
        using var dir = new TempDirectory();
        File.WriteAllBytes(dir.File("a"), Data(1000, 7));
        using SafeFileHandle file = SpindleFile.OpenHandle(dir.File("a"), FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
        using var fifo = new Fifo(dir.File("fifo"));
        byte[] fromFile = new byte[100];
        byte[] fromPipe = new byte[100];
        Array.Fill(fromPipe, (byte)0xAA);
        var results = new BatchReadResult[2];
        using var cts = new CancellationTokenSource();

        ValueTask batch = SpindleRandomAccess.ReadBatchAsync(new[] { new BatchReadRequest(file, fromFile, 0), new BatchReadRequest(fifo.Reader, fromPipe, 0) }, results, IoEngine.IoUring, cts.Token);
        await Task.Delay(100);
        Assert.False(batch.IsCompleted); // the pipe is empty: its read waits in the kernel
        cts.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await batch.AsTask().WaitAsync(Timeout));

        Assert.True(results[0].Succeeded);
        Assert.Equal(100, results[0].BytesRead);
        Assert.IsAssignableFrom<OperationCanceledException>(results[1].Exception);
        // The kernel let go of the pipe read's buffer: a byte written now does not land in it.
        await SpindleRandomAccess.WriteAsync(fifo.Writer, new byte[] { 1 }, 0);
        await Task.Delay(100);
        Assert.All(fromPipe, x => Assert.Equal(0xAA, x));
    }

    [Fact]
    public async Task A_batch_of_O_DIRECT_reads_reaches_the_ring_in_one_io_uring_enter_and_completes_once()
    {
        if (PrivateEngine.Create() is not IoUringEngine engine)
        {
            Console.WriteLine($"io_uring is not available ({IoUringEngine.UnavailableReason}): no ring to submit to.");
            return;
        }
        using var dir = new TempDirectory(AppContext.BaseDirectory); // a disk: the router reads memory-backed O_DIRECT storage inline
        string path = dir.File("direct");
        File.WriteAllBytes(path, Data(1 << 20, 8));
        using SafeFileHandle handle = SpindleFile.OpenHandle(path, new SpindleFileOptions { Mode = FileMode.Open, Access = FileAccess.Read, DirectIO = true });
        if (HandleFacts.Of(handle).SynchronousBackend)
        {
            Console.WriteLine("the test directory is on memory-backed storage: O_DIRECT reads run inline there, not on the ring.");
            return;
        }
        using SafeFileHandle system = File.OpenHandle(path);
        using IMemoryOwner<byte> owner = AlignedMemoryPool.Shared.Rent(32 * 4096);
        Memory<byte> memory = owner.Memory;
        var requests = new BatchReadRequest[32];
        for (int i = 0; i < 32; i++)
        {
            requests[i] = new BatchReadRequest(handle, memory.Slice(i * 4096, 4096), (long)((i * 7919) % 256) * 4096);
        }
        var results = new BatchReadResult[32];
        await engine.ReadBatchAsync(requests, results, CancellationToken.None).AsTask().WaitAsync(Timeout); // warm-up

        // Once the ring thread has gone to sleep, everything the batch queues goes in with the one enter its wake-up makes.
        Assert.True(SpinWait.SpinUntil(() => EngineCounts.Of(engine.Thread).IsSleeping, Timeout));
        long enters = EngineCounts.Of(engine.Thread).SubmittingEnters;
        Array.Clear(results);
        memory.Span.Clear();
        await engine.ReadBatchAsync(requests, results, CancellationToken.None).AsTask().WaitAsync(Timeout);
        Assert.Equal(1, EngineCounts.Of(engine.Thread).SubmittingEnters - enters);
        Assert.True(EngineCounts.Of(engine.Thread).MaxInFlight >= 32, $"at most {EngineCounts.Of(engine.Thread).MaxInFlight} SQEs were in flight together");
        for (int i = 0; i < 32; i++)
        {
            byte[] expected = new byte[4096];
            Assert.Equal(4096, System.IO.RandomAccess.Read(system, expected, requests[i].FileOffset));
            Assert.True(results[i].Succeeded, results[i].Exception?.ToString());
            Assert.Equal(4096, results[i].BytesRead);
            Assert.Equal(expected, requests[i].Buffer.ToArray());
        }
    }

    [Fact]
    public async Task A_batch_on_the_ring_mixes_ring_inline_and_failed_requests_with_a_result_each()
    {
        if (PrivateEngine.Create() is not IoUringEngine engine)
        {
            Console.WriteLine($"io_uring is not available ({IoUringEngine.UnavailableReason}): no ring to submit to.");
            return;
        }
        using var dir = new TempDirectory();
        byte[] data = Data(50_000, 9);
        File.WriteAllBytes(dir.File("a"), data);
        File.WriteAllBytes(dir.File("w"), Data(100, 10));
        using SafeFileHandle a = SpindleFile.OpenHandle(dir.File("a"), FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
        using SafeFileHandle writeOnly = SpindleFile.OpenHandle(dir.File("w"), FileMode.Open, FileAccess.Write, FileShare.ReadWrite);
        using var fifo = new Fifo(dir.File("fifo"));
        await SpindleRandomAccess.WriteAsync(fifo.Writer, new byte[] { 7, 8 }, 0);
        byte[] fromPipe = new byte[10];
        var requests = new[]
        {
            new BatchReadRequest(a, new byte[1000], 10),          // cached: the fast path, on this thread
            new BatchReadRequest(writeOnly, new byte[10], 0),     // EBADF from the kernel, in its own result
            new BatchReadRequest(fifo.Reader, fromPipe, 0),       // a pipe: the ring's lane for handles that may wait
            new BatchReadRequest(a, new byte[0], 0),              // empty: inline
            new BatchReadRequest(a, new byte[100], 60_000),       // past the end
        };
        var results = new BatchReadResult[requests.Length];
        await engine.ReadBatchAsync(requests, results, CancellationToken.None).AsTask().WaitAsync(Timeout);
        Assert.Equal(1000, results[0].BytesRead);
        Assert.Equal(data.AsSpan(10, 1000).ToArray(), requests[0].Buffer.ToArray());
        Assert.IsType<UnauthorizedAccessException>(results[1].Exception);
        Assert.Equal(2, results[2].BytesRead);
        Assert.Equal(new byte[] { 7, 8 }, fromPipe[..2]);
        Assert.True(results[3].Succeeded);
        Assert.Equal(0, results[3].BytesRead);
        Assert.True(results[4].Succeeded);
        Assert.Equal(0, results[4].BytesRead);
    }

    // A private io_uring engine whose batches always share their cached members with pool work items, with more
    // helpers than this machine may have cores: the parallel path runs whatever the load and the core count.
    // Each result against System.IO's RandomAccess.ReadAsync of the same request (expected holds System.IO's handle and
    // a buffer of its own): the same exception type and HResult, or the same count and bytes.
    private static async Task AssertAsSystemIOReads((SafeFileHandle Handle, byte[] Buffer, long Offset)[] expected,
        BatchReadRequest[] requests, BatchReadResult[] results, string where)
    {
        for (int i = 0; i < expected.Length; i++)
        {
            int theirCount = 0;
            Exception? theirError = null;
            try
            {
                theirCount = await System.IO.RandomAccess.ReadAsync(expected[i].Handle, expected[i].Buffer, expected[i].Offset);
            }
            catch (Exception e)
            {
                theirError = e;
            }
            if (theirError is not null)
            {
                Assert.False(results[i].Succeeded, $"{where}request {i}: System.IO threw {theirError.GetType().Name}");
                Assert.IsType(theirError.GetType(), results[i].Exception);
                Assert.Equal(theirError.HResult, results[i].Exception!.HResult);
                continue;
            }
            Assert.True(results[i].Succeeded, $"{where}request {i}: {results[i].Exception}");
            Assert.Equal(theirCount, results[i].BytesRead);
            Assert.Equal(expected[i].Buffer, requests[i].Buffer.ToArray());
        }
    }

    private static IoUringEngine? SharingEngine(int helpers = 3)
    {
        if (PrivateEngine.Create() is not IoUringEngine engine)
        {
            Console.WriteLine($"io_uring is not available ({IoUringEngine.UnavailableReason}): no ring to submit to.");
            return null;
        }
        engine.BatchShareMinimumWork = 0;
        engine.BatchShareHelpers = helpers;
        return engine;
    }

    [Theory]
    [InlineData(1)]
    [InlineData(3)]
    public async Task A_shared_batch_gives_every_request_what_System_IO_ReadAsync_gives_it_and_leaves_its_buffers_alone_after(int helpers)
    {
        if (SharingEngine(helpers) is not IoUringEngine engine)
        {
            return;
        }
        using var dir = new TempDirectory(AppContext.BaseDirectory); // a disk: evicted pages are read from it
        byte[] aData = Data(1 << 20, 11);
        File.WriteAllBytes(dir.File("a"), aData);
        File.WriteAllBytes(dir.File("b"), Data(5_000, 12));
        File.WriteAllBytes(dir.File("w"), Data(100, 13));
        using SafeFileHandle a = SpindleFile.OpenHandle(dir.File("a"), FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
        using SafeFileHandle b = SpindleFile.OpenHandle(dir.File("b"), FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
        using SafeFileHandle writeOnly = SpindleFile.OpenHandle(dir.File("w"), FileMode.Open, FileAccess.Write, FileShare.ReadWrite);
        using SafeFileHandle systemA = File.OpenHandle(dir.File("a"), FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
        using SafeFileHandle systemB = File.OpenHandle(dir.File("b"), FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
        using SafeFileHandle systemWriteOnly = File.OpenHandle(dir.File("w"), FileMode.Open, FileAccess.Write, FileShare.ReadWrite);

        var random = new Random(43);
        var finished = new List<byte[]>(); // buffers of completed batches, filled with 0xAA after their batch completed
        for (int round = 0; round < 200; round++)
        {
            if (round % 20 == 0)
            {
                // Part of the big file leaves the page cache: members that miss (or hit only a prefix) go to the ring.
                System.IO.RandomAccess.FlushToDisk(systemA);
                TestLibc.PosixFAdvise((int)systemA.DangerousGetHandle(), random.NextInt64(0, 1 << 19), 1 << 18, TestLibc.POSIX_FADV_DONTNEED);
            }
            int count = random.Next(2, 70);
            var requests = new BatchReadRequest[count];
            var expected = new (SafeFileHandle Handle, byte[] Buffer, long Offset)[count];
            for (int i = 0; i < count; i++)
            {
                int which = random.Next(10);
                (SafeFileHandle ours, SafeFileHandle theirs, long size) = which switch
                {
                    < 6 => (a, systemA, 1L << 20),
                    < 9 => (b, systemB, 5_000L),
                    _ => (writeOnly, systemWriteOnly, 100L),
                };
                long offset = random.Next(4) == 0 ? random.NextInt64(size - 10, size + 5000) : random.NextInt64(0, size);
                int length = random.Next(8) == 0 ? 0 : random.Next(1, 70_000);
                requests[i] = new BatchReadRequest(ours, new byte[length], offset);
                expected[i] = (theirs, new byte[length], offset);
            }
            var results = new BatchReadResult[count];
            await engine.ReadBatchAsync(requests, results, CancellationToken.None).AsTask().WaitAsync(Timeout);
            await AssertAsSystemIOReads(expected, requests, results, $"round {round}, ");
            foreach (BatchReadRequest request in requests)
            {
                Assert.True(System.Runtime.InteropServices.MemoryMarshal.TryGetArray<byte>(request.Buffer, out ArraySegment<byte> buffer));
                Array.Fill(buffer.Array!, (byte)0xAA);
                finished.Add(buffer.Array!);
            }
        }
        // Helpers that started after their batch completed found nothing to claim: no finished batch's buffer changed.
        Assert.All(finished, buffer => Assert.All(buffer, x => Assert.Equal(0xAA, x)));
    }

    [Fact]
    public async Task A_shared_batch_sends_its_uncached_members_to_the_ring_in_one_io_uring_enter()
    {
        if (SharingEngine() is not IoUringEngine engine)
        {
            return;
        }
        using var dir = new TempDirectory(AppContext.BaseDirectory); // a disk: the router reads memory-backed O_DIRECT storage inline
        string path = dir.File("direct");
        File.WriteAllBytes(path, Data(1 << 20, 14));
        File.WriteAllBytes(dir.File("cached"), Data(1 << 20, 15));
        using SafeFileHandle handle = SpindleFile.OpenHandle(path, new SpindleFileOptions { Mode = FileMode.Open, Access = FileAccess.Read, DirectIO = true });
        using SafeFileHandle cached = SpindleFile.OpenHandle(dir.File("cached"), FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
        if (HandleFacts.Of(handle).SynchronousBackend)
        {
            Console.WriteLine("the test directory is on memory-backed storage: O_DIRECT reads run inline there, not on the ring.");
            return;
        }
        using SafeFileHandle system = File.OpenHandle(path);
        using SafeFileHandle systemCached = File.OpenHandle(dir.File("cached"));
        using IMemoryOwner<byte> owner = AlignedMemoryPool.Shared.Rent(64 * 4096);
        Memory<byte> memory = owner.Memory;
        // O_DIRECT members (never on the fast path) between cached ones.
        var requests = new BatchReadRequest[64];
        for (int i = 0; i < 64; i++)
        {
            requests[i] = new BatchReadRequest(i % 2 == 0 ? handle : cached, memory.Slice(i * 4096, 4096), (long)((i * 7919) % 256) * 4096);
        }
        var results = new BatchReadResult[64];
        await engine.ReadBatchAsync(requests, results, CancellationToken.None).AsTask().WaitAsync(Timeout); // warm-up

        Assert.True(SpinWait.SpinUntil(() => EngineCounts.Of(engine.Thread).IsSleeping, Timeout));
        long enters = EngineCounts.Of(engine.Thread).SubmittingEnters;
        Array.Clear(results);
        memory.Span.Clear();
        await engine.ReadBatchAsync(requests, results, CancellationToken.None).AsTask().WaitAsync(Timeout);
        Assert.Equal(1, EngineCounts.Of(engine.Thread).SubmittingEnters - enters);
        Assert.True(EngineCounts.Of(engine.Thread).MaxInFlight >= 32, $"at most {EngineCounts.Of(engine.Thread).MaxInFlight} SQEs were in flight together");
        for (int i = 0; i < 64; i++)
        {
            byte[] expected = new byte[4096];
            Assert.Equal(4096, System.IO.RandomAccess.Read(i % 2 == 0 ? system : systemCached, expected, requests[i].FileOffset));
            Assert.True(results[i].Succeeded, results[i].Exception?.ToString());
            Assert.Equal(4096, results[i].BytesRead);
            Assert.Equal(expected, requests[i].Buffer.ToArray());
        }
    }

    [Fact]
    public async Task Cancelling_a_shared_batch_cancels_its_waiting_read_and_keeps_the_cached_ones()
    {
        if (SharingEngine() is not IoUringEngine engine)
        {
            return;
        }
        using var dir = new TempDirectory();
        byte[] data = Data(100_000, 16);
        File.WriteAllBytes(dir.File("a"), data);
        using SafeFileHandle file = SpindleFile.OpenHandle(dir.File("a"), FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
        using var fifo = new Fifo(dir.File("fifo"));
        byte[] fromPipe = new byte[100];
        Array.Fill(fromPipe, (byte)0xAA);
        var requests = new BatchReadRequest[33];
        for (int i = 0; i < 32; i++)
        {
            requests[i] = new BatchReadRequest(file, new byte[3000], i * 3000);
        }
        requests[32] = new BatchReadRequest(fifo.Reader, fromPipe, 0);
        var results = new BatchReadResult[33];
        using var cts = new CancellationTokenSource();

        ValueTask batch = engine.ReadBatchAsync(requests, results, cts.Token);
        await Task.Delay(100);
        Assert.False(batch.IsCompleted); // the pipe is empty: its read waits in the kernel
        cts.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await batch.AsTask().WaitAsync(Timeout));

        for (int i = 0; i < 32; i++)
        {
            Assert.True(results[i].Succeeded, results[i].Exception?.ToString());
            Assert.Equal(3000, results[i].BytesRead);
            Assert.Equal(data.AsSpan(i * 3000, 3000).ToArray(), requests[i].Buffer.ToArray());
        }
        Assert.IsAssignableFrom<OperationCanceledException>(results[32].Exception);
        await SpindleRandomAccess.WriteAsync(fifo.Writer, new byte[] { 1 }, 0);
        await Task.Delay(100);
        Assert.All(fromPipe, x => Assert.Equal(0xAA, x));
    }

    [Fact]
    public void Small_batches_stay_on_the_callers_thread_and_larger_ones_are_shared_only_with_a_second_core()
    {
        if (PrivateEngine.Create() is not IoUringEngine engine)
        {
            return;
        }
        using var dir = new TempDirectory();
        File.WriteAllBytes(dir.File("a"), Data(1 << 20, 17));
        using SafeFileHandle a = SpindleFile.OpenHandle(dir.File("a"), FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
        BatchReadRequest[] Batch(int count, int size) => Enumerable.Range(0, count).Select(i => new BatchReadRequest(a, new byte[size], i * size)).ToArray();
        bool Shared(BatchReadRequest[] requests)
        {
            CachedBatchShare? share = engine.TryShareCachedMembers(requests);
            if (share is null)
            {
                return false;
            }
            share.Run();
            share.Release();
            return true;
        }

        bool secondCore = Environment.ProcessorCount > 1 && ReadFastPath.Enabled;
        Assert.False(Shared(Batch(2, 4096)));
        Assert.False(Shared(Batch(5, 4096)));
        Assert.False(Shared(Batch(2, 16384)));
        Assert.Equal(secondCore, Shared(Batch(6, 4096)));
        Assert.Equal(secondCore, Shared(Batch(32, 4096)));
        Assert.Equal(secondCore, Shared(Batch(2, 65536)));

        // O_DIRECT reads of a disk never complete on the fast path: however large the batch, no helper is woken for them.
        using var disk = new TempDirectory(AppContext.BaseDirectory);
        File.WriteAllBytes(disk.File("d"), Data(1 << 20, 18));
        using SafeFileHandle direct = SpindleFile.OpenHandle(disk.File("d"), new SpindleFileOptions { Mode = FileMode.Open, Access = FileAccess.Read, DirectIO = true });
        if (!HandleFacts.Of(direct).SynchronousBackend)
        {
            using IMemoryOwner<byte> owner = AlignedMemoryPool.Shared.Rent(32 * 4096);
            BatchReadRequest[] directBatch = Enumerable.Range(0, 32).Select(i => new BatchReadRequest(direct, owner.Memory.Slice(i * 4096, 4096), i * 4096L)).ToArray();
            Assert.False(Shared(directBatch));
            // Beside enough cached members, the batch is shared for them.
            Assert.Equal(secondCore, Shared([.. directBatch, .. Batch(6, 4096)]));
        }

        engine.BatchShareHelpers = 0;
        Assert.False(Shared(Batch(32, 65536)));
    }
}
