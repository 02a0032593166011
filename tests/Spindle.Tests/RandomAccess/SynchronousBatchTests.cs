using System.Buffers;
using Microsoft.Win32.SafeHandles;
using Spindle.Engines;
using Spindle.Engines.FastPath;
using Spindle.Engines.IoUring;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.RandomAccess;

/// <summary>
/// The synchronous <c>ReadBatch</c> (router row 17): on io_uring, the reads that must go to a disk are handed to the
/// kernel together from a ring rented for the batch; every result is what System.IO's <c>RandomAccess.Read</c> gives
/// the same request. Each test runs on a thread of its own, so that the thread's counters are the test's. That rings
/// do not pile up as threads come and go is shown in a child process (<c>DescriptorExhaustionTests</c>).
/// </summary>
public class SynchronousBatchTests
{
    private static byte[] Data(int length, int seed)
    {
        var data = new byte[length];
        new Random(seed).NextBytes(data);
        return data;
    }

    private static void OnOwnThread(Action test)
    {
        Exception? failure = null;
        var thread = new Thread(() =>
        {
            try
            {
                test();
            }
            catch (Exception e)
            {
                failure = e;
            }
        });
        thread.IsBackground = true; // a test that hangs fails below instead of holding the run
        thread.Start();
        Assert.True(thread.Join(TimeSpan.FromSeconds(60)), "the test's thread did not finish in 60 s");
        if (failure is not null)
        {
            System.Runtime.ExceptionServices.ExceptionDispatchInfo.Throw(failure);
        }
    }

    private static bool RingExpected(SafeFileHandle handle)
    {
        if (EngineSelector.Default.Kind != IoEngine.IoUring)
        {
            Console.WriteLine($"Auto is {EngineSelector.Default.Kind} here: a synchronous batch reads one request after the other.");
            return false;
        }
        if (HandleFacts.Of(handle).SynchronousBackend || HandleFacts.Of(handle).RefusesNonBlockingIo)
        {
            Console.WriteLine("the test directory is on storage io_uring reads through its workers or copies at once: read inline.");
            return false;
        }
        return true;
    }

    [Fact]
    public void O_DIRECT_reads_go_to_the_kernel_together_in_rounds_of_the_rings_size_and_read_what_System_IO_reads() => OnOwnThread(() =>
    {
        using var dir = new TempDirectory(AppContext.BaseDirectory); // a disk: memory-backed storage is read inline
        string path = dir.File("direct");
        File.WriteAllBytes(path, Data(1 << 20, 11));
        using SafeFileHandle handle = SpindleFile.OpenHandle(path, new SpindleFileOptions { Mode = FileMode.Open, Access = FileAccess.Read, DirectIO = true });
        using SafeFileHandle system = File.OpenHandle(path);
        const int Count = 2 * OwnRing.Entries + 6; // three rounds
        using IMemoryOwner<byte> owner = AlignedMemoryPool.Shared.Rent(Count * 4096);
        Memory<byte> memory = owner.Memory;
        memory.Span.Fill(0xAA);
        var requests = new BatchReadRequest[Count];
        for (int i = 0; i < Count; i++)
        {
            // Offsets up to past the end: the last ones read short or nothing, as System.IO's reads do.
            long offset = i < Count - 2 ? (long)(i * 7919 % 256) * 4096 : (1 << 20) + (i - Count + 2) * 4096;
            requests[i] = new BatchReadRequest(handle, memory.Slice(i * 4096, 4096), offset);
        }
        var results = new BatchReadResult[Count];

        bool ring = RingExpected(handle);
        SpindleRandomAccess.ReadBatch(requests, results);

        if (ring)
        {
            Assert.Equal(3, EngineCounts.RoundsOnThisThread);
            Assert.Equal(Count, EngineCounts.OwnRingCompletionsOnThisThread);
        }
        else
        {
            Assert.Equal(0, EngineCounts.RoundsOnThisThread);
        }
        for (int i = 0; i < Count; i++)
        {
            byte[] expected = new byte[4096];
            int read = System.IO.RandomAccess.Read(system, expected, requests[i].FileOffset);
            Assert.True(results[i].Succeeded, results[i].Exception?.ToString());
            Assert.Equal(read, results[i].BytesRead);
            Assert.Equal(expected.AsSpan(0, read).ToArray(), requests[i].Buffer[..read].ToArray());
        }
    });

    [Fact]
    public void Cached_reads_are_copied_on_the_callers_thread_and_only_the_others_reach_the_ring() => OnOwnThread(() =>
    {
        using var dir = new TempDirectory(AppContext.BaseDirectory);
        string path = dir.File("buffered");
        byte[] data = Data(1 << 20, 12);
        File.WriteAllBytes(path, data);
        using SafeFileHandle handle = SpindleFile.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
        bool ring = RingExpected(handle) && HandleFacts.Of(handle).NonBlockingReads;
        var requests = new BatchReadRequest[16];
        for (int i = 0; i < requests.Length; i++)
        {
            requests[i] = new BatchReadRequest(handle, new byte[5000], i * 60_000L + 7);
        }
        var results = new BatchReadResult[requests.Length];

        // The file was just written: its pages are cached, and no read needs the ring.
        SpindleRandomAccess.ReadBatch(requests, results);
        long rounds = EngineCounts.RoundsOnThisThread;
        Assert.Equal(0, rounds);
        for (int i = 0; i < requests.Length; i++)
        {
            Assert.Equal(5000, results[i].BytesRead);
            Assert.Equal(data.AsSpan((int)requests[i].FileOffset, 5000).ToArray(), requests[i].Buffer.ToArray());
        }

        // Dropped from the cache (written back first), the reads go to the kernel in one round.
        using (SafeFileHandle flush = File.OpenHandle(path, FileMode.Open, FileAccess.ReadWrite))
        {
            System.IO.RandomAccess.FlushToDisk(flush);
        }
        Assert.Equal(0, TestLibc.PosixFAdvise((int)handle.DangerousGetHandle(), 0, 0, TestLibc.POSIX_FADV_DONTNEED));
        Array.Clear(results);
        foreach (BatchReadRequest request in requests)
        {
            request.Buffer.Span.Clear();
        }
        SpindleRandomAccess.ReadBatch(requests, results);
        if (ring)
        {
            Assert.Equal(1, EngineCounts.RoundsOnThisThread);
        }
        for (int i = 0; i < requests.Length; i++)
        {
            Assert.Equal(5000, results[i].BytesRead);
            Assert.Equal(data.AsSpan((int)requests[i].FileOffset, 5000).ToArray(), requests[i].Buffer.ToArray());
        }
    });

    [Fact]
    public void A_read_the_ring_fails_gets_the_exception_a_lone_read_throws_and_the_others_their_bytes() => OnOwnThread(() =>
    {
        using var dir = new TempDirectory(AppContext.BaseDirectory);
        File.WriteAllBytes(dir.File("a"), Data(100_000, 13));
        using SafeFileHandle readable = SpindleFile.OpenHandle(dir.File("a"), new SpindleFileOptions { Mode = FileMode.Open, Access = FileAccess.Read, DirectIO = true });
        using SafeFileHandle writeOnly = SpindleFile.OpenHandle(dir.File("a"), new SpindleFileOptions { Mode = FileMode.Open, Access = FileAccess.Write, Share = FileShare.ReadWrite, DirectIO = true });
        using IMemoryOwner<byte> owner = AlignedMemoryPool.Shared.Rent(4 * 4096);
        Memory<byte> memory = owner.Memory;
        var requests = new[]
        {
            new BatchReadRequest(readable, memory[..4096], 0),
            new BatchReadRequest(writeOnly, memory.Slice(4096, 4096), 4096),
            new BatchReadRequest(readable, memory.Slice(8192, 4096), 8192),
            new BatchReadRequest(writeOnly, memory.Slice(12288, 4096), 0),
        };
        var results = new BatchReadResult[4];
        SpindleRandomAccess.ReadBatch(requests, results);

        Exception expected = Assert.ThrowsAny<Exception>(() => SpindleRandomAccess.Read(writeOnly, memory.Slice(4096, 4096).Span, 4096));
        Assert.Equal(4096, results[0].BytesRead);
        Assert.Equal(4096, results[2].BytesRead);
        foreach (int failed in new[] { 1, 3 })
        {
            Assert.False(results[failed].Succeeded);
            Assert.Equal(expected.GetType(), results[failed].Exception!.GetType());
            Assert.Equal(expected.Message, results[failed].Exception!.Message);
        }
    });

    [Fact]
    public void Requests_on_memory_backed_storage_are_read_on_the_callers_thread()
    {
        Assert.Equal(Mechanism.OwnRing, Router.RouteSynchronousBatchMember(new HandleFacts(), 4096));
        Assert.Equal(Mechanism.OwnRing, Router.RouteSynchronousBatchMember(new HandleFacts { BufferedFile = true, NonBlockingReads = true }, 1 << 20));
        Assert.Equal(Mechanism.Inline, Router.RouteSynchronousBatchMember(new HandleFacts(), 0));
        Assert.Equal(Mechanism.Inline, Router.RouteSynchronousBatchMember(new HandleFacts { SynchronousBackend = true }, 4096));
        Assert.Equal(Mechanism.Inline, Router.RouteSynchronousBatchMember(new HandleFacts { RefusesNonBlockingIo = true }, 4096));
        Assert.Equal(Mechanism.Inline, Router.RouteSynchronousBatchMember(new HandleFacts { MayBlockIndefinitely = true }, 4096));
        Assert.Equal(Mechanism.Inline, Router.RouteSynchronousBatchMember(new HandleFacts { CharacterDevice = true, MayBlockIndefinitely = true }, 4096));

        OnOwnThread(() =>
        {
            using var dir = new TempDirectory(); // the temporary directory: tmpfs on many systems
            File.WriteAllBytes(dir.File("m"), Data(64 * 1024, 14));
            using SafeFileHandle handle = SpindleFile.OpenHandle(dir.File("m"), FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
            if (!HandleFacts.Of(handle).SynchronousBackend)
            {
                Console.WriteLine("the temporary directory is not memory-backed here: nothing to check.");
                return;
            }
            var requests = new[] { new BatchReadRequest(handle, new byte[100], 0), new BatchReadRequest(handle, new byte[100], 1000) };
            var results = new BatchReadResult[2];
            SpindleRandomAccess.ReadBatch(requests, results);
            Assert.Equal(0, EngineCounts.RoundsOnThisThread);
            Assert.Equal(100, results[1].BytesRead);
        });
    }

    // Eight threads, each with a ring of its own while its batch runs, read random batches of a direct and a buffered handle at once, with reads
    // past the end among them; every buffer must hold what System.IO reads there, and nothing outside a request's buffer
    // is touched (inside it, past the bytes read, an O_DIRECT read past the end may write, with pread as on the ring).
    [Fact]
    public void Threads_reading_batches_at_once_each_get_exactly_System_IOs_bytes()
    {
        using var dir = new TempDirectory(AppContext.BaseDirectory);
        const int Size = 4 << 20;
        byte[] data = Data(Size, 16);
        File.WriteAllBytes(dir.File("f"), data);
        using SafeFileHandle direct = SpindleFile.OpenHandle(dir.File("f"), new SpindleFileOptions { Mode = FileMode.Open, Access = FileAccess.Read, Share = FileShare.Read, DirectIO = true });
        using SafeFileHandle buffered = SpindleFile.OpenHandle(dir.File("f"), FileMode.Open, FileAccess.Read, FileShare.Read);
        var failures = new System.Collections.Concurrent.ConcurrentQueue<string>();
        var threads = Enumerable.Range(0, 8).Select(t => new Thread(() =>
        {
            var random = new Random(100 + t);
            using IMemoryOwner<byte> owner = AlignedMemoryPool.Shared.Rent(80 * 8192);
            Memory<byte> memory = owner.Memory;
            for (int round = 0; round < 30; round++)
            {
                int count = random.Next(2, 80);
                memory.Span.Fill(0xEE);
                var requests = new BatchReadRequest[count];
                for (int i = 0; i < count; i++)
                {
                    bool isDirect = random.Next(2) == 0;
                    long offset = random.Next(4) == 0 ? Size - 4096 * random.Next(0, 3) : random.NextInt64(Size / 4096) * 4096;
                    int length = isDirect ? 4096 * random.Next(1, 3) : random.Next(1, 8192);
                    requests[i] = new BatchReadRequest(isDirect ? direct : buffered, memory.Slice(i * 8192, length), isDirect ? offset : offset + random.Next(100));
                }
                var results = new BatchReadResult[count];
                SpindleRandomAccess.ReadBatch(requests, results);
                for (int i = 0; i < count; i++)
                {
                    long offset = requests[i].FileOffset;
                    int expected = (int)Math.Clamp(Size - offset, 0, requests[i].Buffer.Length);
                    Span<byte> slot = memory.Span.Slice(i * 8192, 8192);
                    if (!results[i].Succeeded || results[i].BytesRead != expected
                        || !slot[..expected].SequenceEqual(data.AsSpan((int)Math.Min(offset, Size), expected))
                        || slot[requests[i].Buffer.Length..].ContainsAnyExcept((byte)0xEE))
                    {
                        failures.Enqueue($"thread {t} round {round} request {i}: offset {offset}, length {requests[i].Buffer.Length}, result {results[i].BytesRead} {results[i].Exception?.Message}");
                    }
                }
            }
        })).ToList();
        threads.ForEach(t => t.Start());
        threads.ForEach(t => t.Join());
        Assert.True(failures.IsEmpty, string.Join("\n", failures.Take(8)));
    }

    // Aligned memory whose Pin runs user code once a read is being placed: here, another batch on the same thread while
    // the first is being placed. Pins while nothing is placed (the alignment check's) do nothing.
    private sealed unsafe class ReentrantMemory(int length, Action whilePlacing) : MemoryManager<byte>
    {
        private readonly byte* _pointer = (byte*)System.Runtime.InteropServices.NativeMemory.AlignedAlloc((nuint)length, 4096);
        private Action? _whilePlacing = whilePlacing;

        public int Pins { get; private set; }

        public bool Ran { get; private set; }

        public override Span<byte> GetSpan() => new(_pointer, length);

        public override MemoryHandle Pin(int elementIndex = 0)
        {
            Pins++;
            if (_whilePlacing is { } callback && EngineCounts.PlacingOnThisThread)
            {
                _whilePlacing = null;
                Ran = true;
                callback();
            }
            return new MemoryHandle(_pointer + elementIndex);
        }

        public override void Unpin()
        {
        }

        protected override void Dispose(bool disposing) => System.Runtime.InteropServices.NativeMemory.AlignedFree(_pointer);
    }

    [Fact]
    public void A_batch_started_from_a_buffers_Pin_during_another_batch_on_the_same_thread_reads_right() => OnOwnThread(() =>
    {
        using var dir = new TempDirectory(AppContext.BaseDirectory);
        byte[] data = Data(1 << 20, 17);
        File.WriteAllBytes(dir.File("f"), data);
        using SafeFileHandle handle = SpindleFile.OpenHandle(dir.File("f"), new SpindleFileOptions { Mode = FileMode.Open, Access = FileAccess.Read, DirectIO = true });
        using IMemoryOwner<byte> inner = AlignedMemoryPool.Shared.Rent(2 * 4096);
        var innerResults = new BatchReadResult[2];
        using IMemoryOwner<byte> first = AlignedMemoryPool.Shared.Rent(8192);
        // The second request's buffer starts the inner batch while the first request's read is placed and not yet submitted.
        using var second = new ReentrantMemory(4096, () => SpindleRandomAccess.ReadBatch(
            new[] { new BatchReadRequest(handle, inner.Memory[..4096], 12288), new BatchReadRequest(handle, inner.Memory.Slice(4096, 4096), 65536) },
            innerResults));
        // Lengths that tell the reads apart: a completion taken by the wrong batch shows in a result, or leaves a batch waiting.
        var requests = new[] { new BatchReadRequest(handle, first.Memory[..8192], 0), new BatchReadRequest(handle, second.Memory, 8192) };
        var results = new BatchReadResult[2];

        SpindleRandomAccess.ReadBatch(requests, results);

        if (!RingExpected(handle))
        {
            return;
        }
        Assert.True(second.Ran, $"the inner batch never ran while the outer one was placed ({second.Pins} pins)");
        Assert.Equal([8192, 4096], results.Select(r => r.BytesRead));
        Assert.Equal([4096, 4096], innerResults.Select(r => r.BytesRead));
        Assert.Equal(data.AsSpan(0, 8192).ToArray(), first.Memory[..8192].ToArray());
        Assert.Equal(data.AsSpan(8192, 4096).ToArray(), second.Memory.ToArray());
        Assert.Equal(data.AsSpan(12288, 4096).ToArray(), inner.Memory[..4096].ToArray());
        Assert.Equal(data.AsSpan(65536, 4096).ToArray(), inner.Memory.Slice(4096, 4096).ToArray());
    });
}
