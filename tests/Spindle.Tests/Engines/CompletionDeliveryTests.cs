using System.Buffers;
using Microsoft.Win32.SafeHandles;
using System.Runtime.CompilerServices;
using Spindle.Engines.IoUring;
using Spindle.Tests.Infrastructure;
using Xunit.Abstractions;

namespace Spindle.Tests.Engines;

/// <summary>
/// Where an io_uring completion is handled (issue 32): a thread blocked in <c>GetResult</c> gets its own completion
/// directly, never through the thread pool; operations started in the inline mode run their continuation on the
/// thread that reaped them (the ring's thread, or one calling <see cref="SpindleRandomAccess.PollCompletions"/>),
/// the others on pool threads. Reads of empty pipes hold each operation in the kernel until the test writes.
/// </summary>
public class CompletionDeliveryTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    private readonly ITestOutputHelper _output;

    public CompletionDeliveryTests(ITestOutputHelper output) => _output = output;

    [Fact]
    public void A_thread_blocked_in_GetResult_gets_its_completion_without_the_thread_pool()
    {
        if (PrivateEngine.Create() is not IoUringEngine engine)
        {
            Console.WriteLine($"io_uring is not available ({IoUringEngine.UnavailableReason}): nothing to wait for on a ring.");
            return;
        }
        using var dir = new TempDirectory();
        using var fifo = new Fifo(dir.File("fifo"));
        byte[] buffer = new byte[1];
        ValueTask<int> read = engine.ReadAsync(fifo.Reader, buffer, 0, useFastPath: false, CancellationToken.None);
        Assert.False(read.IsCompleted);
        int result = -1;
        WaitOnAnotherThread(engine, () => result = read.GetAwaiter().GetResult(), fifo);
        Assert.Equal(1, result);
        Assert.Equal(42, buffer[0]);
    }

    [Fact]
    public void A_thread_blocked_in_GetResult_for_a_batch_gets_it_without_the_thread_pool()
    {
        if (PrivateEngine.Create() is not IoUringEngine engine)
        {
            Console.WriteLine($"io_uring is not available ({IoUringEngine.UnavailableReason}): nothing to wait for on a ring.");
            return;
        }
        using var dir = new TempDirectory();
        using var first = new Fifo(dir.File("first"));
        using var second = new Fifo(dir.File("second"));
        byte[] a = new byte[1];
        byte[] b = new byte[1];
        var requests = new[] { new BatchReadRequest(first.Reader, a, 0), new BatchReadRequest(second.Reader, b, 0) };
        var results = new BatchReadResult[2];
        ValueTask batch = engine.ReadBatchAsync(requests, results, CancellationToken.None);
        Assert.False(batch.IsCompleted);
        WaitOnAnotherThread(engine, () => batch.GetAwaiter().GetResult(), first, second);
        Assert.Equal(new[] { 1, 1 }, results.Select(r => r.BytesRead));
        Assert.Equal(new byte[] { 42, 42 }, new[] { a[0], b[0] });
    }

    // A new thread blocks in GetResult (sync-over-async, through getResult); once it waits, a byte written to each pipe
    // completes what it waits for, which must reach it directly from the reaper, never through a pool thread.
    private static void WaitOnAnotherThread(IoUringEngine engine, Action getResult, params Fifo[] pipes)
    {
        long posted = EngineCounts.Of(engine.Thread).Posted;
        Exception? error = null;
        var waiter = new Thread(() =>
        {
            try
            {
                getResult();
            }
            catch (Exception e)
            {
                error = e;
            }
        });
        waiter.Start();
        Assert.True(SpinWait.SpinUntil(() => EngineCounts.Of(engine.Thread).Waiters == 1, Timeout), "the thread never waited in GetResult");
        foreach (Fifo pipe in pipes)
        {
            SpindleRandomAccess.Write(pipe.Writer, new byte[] { 42 }, 0);
        }
        Assert.True(waiter.Join(Timeout), "the waiting thread never got its result");
        Assert.Null(error);
        Assert.Equal(posted, EngineCounts.Of(engine.Thread).Posted); // handed to the waiter, not queued for a pool thread
        Assert.Equal(0, EngineCounts.Of(engine.Thread).Waiters);
    }

    [Theory]
    [InlineData(0, 4096)]        // a whole block
    [InlineData(12_000, 4096)]   // across the end of the file: the count System.IO's read gives
    [InlineData(20_000, 100)]    // past the end: 0
    public void A_read_that_has_not_reached_the_kernel_is_run_by_the_thread_waiting_for_it(long offset, int length)
    {
        if (PrivateEngine.Create() is not IoUringEngine engine)
        {
            Console.WriteLine($"io_uring is not available ({IoUringEngine.UnavailableReason}): no ring to take a read off.");
            return;
        }
        using var dir = new TempDirectory();
        string path = dir.File("data");
        byte[] content = new byte[15_000];
        new Random(32).NextBytes(content);
        File.WriteAllBytes(path, content);
        using SafeFileHandle handle = File.OpenHandle(path, FileMode.Open, FileAccess.Read);
        byte[] expected = new byte[length];
        int expectedCount = System.IO.RandomAccess.Read(handle, expected, offset);

        byte[] buffer = new byte[length];
        // One read through the kernel first, then the ring's thread asleep in the kernel: nothing else drives the ring.
        engine.ReadAsync(handle, new byte[1], 0, useFastPath: false, CancellationToken.None).AsTask().GetAwaiter().GetResult();
        Assert.True(SpinWait.SpinUntil(() => EngineCounts.Of(engine.Thread).IsSleeping, Timeout), "the ring's thread never went to sleep");
        long enters = EngineCounts.Of(engine.Thread).SubmittingEnters;
        int count;
        using (HeldSubmissions.On(engine.Thread))
        {
            ValueTask<int> read = engine.ReadAsync(handle, buffer, offset, useFastPath: false, CancellationToken.None);
            Assert.False(read.IsCompleted);
            count = read.GetAwaiter().GetResult();
        }
        Assert.Equal(expectedCount, count);
        Assert.Equal(expected, buffer);
        Assert.Equal(enters, EngineCounts.Of(engine.Thread).SubmittingEnters); // run here: nothing went to the kernel for it

        // The ring skips the stale entry: the next read goes through the kernel as usual.
        Assert.Equal(expectedCount, engine.ReadAsync(handle, buffer, offset, useFastPath: false, CancellationToken.None).AsTask().GetAwaiter().GetResult());
        Assert.Equal(expected, buffer);
    }

    [Fact]
    public void A_read_cancelled_before_it_reached_the_kernel_completes_cancelled_for_its_waiter()
    {
        if (PrivateEngine.Create() is not IoUringEngine engine)
        {
            Console.WriteLine($"io_uring is not available ({IoUringEngine.UnavailableReason}): no ring to hold a read on.");
            return;
        }
        using var dir = new TempDirectory();
        string path = dir.File("data");
        File.WriteAllBytes(path, Enumerable.Repeat((byte)7, 4096).ToArray());
        using SafeFileHandle handle = File.OpenHandle(path, FileMode.Open, FileAccess.Read);
        byte[] buffer = new byte[4096];
        using var cancellation = new CancellationTokenSource();
        using (HeldSubmissions.On(engine.Thread))
        {
            ValueTask<int> read = engine.ReadAsync(handle, buffer, 0, useFastPath: false, cancellation.Token);
            Assert.False(read.IsCompleted);
            cancellation.Cancel();
            Assert.Throws<OperationCanceledException>(() => read.GetAwaiter().GetResult());
        }
        Assert.All(buffer, b => Assert.Equal(0, b)); // nothing read into it
    }

    [Fact]
    public void A_write_that_has_not_reached_the_kernel_is_run_by_the_thread_waiting_for_it()
    {
        if (PrivateEngine.Create() is not IoUringEngine engine)
        {
            Console.WriteLine($"io_uring is not available ({IoUringEngine.UnavailableReason}): no ring to take a write off.");
            return;
        }
        using var dir = new TempDirectory();
        byte[] data = new byte[10_000];
        new Random(33).NextBytes(data);
        using (SafeFileHandle expected = File.OpenHandle(dir.File("expected"), FileMode.Create, FileAccess.Write))
        {
            System.IO.RandomAccess.Write(expected, data, 3_000);
        }
        using (SafeFileHandle actual = File.OpenHandle(dir.File("actual"), FileMode.Create, FileAccess.Write))
        {
            engine.WriteAsync(actual, new byte[1], 0, useFastPath: false, CancellationToken.None).AsTask().GetAwaiter().GetResult();
            Assert.True(SpinWait.SpinUntil(() => EngineCounts.Of(engine.Thread).IsSleeping, Timeout), "the ring's thread never went to sleep");
            long enters = EngineCounts.Of(engine.Thread).SubmittingEnters;
            using (HeldSubmissions.On(engine.Thread))
            {
                ValueTask write = engine.WriteAsync(actual, data, 3_000, useFastPath: false, CancellationToken.None);
                Assert.False(write.IsCompleted);
                write.GetAwaiter().GetResult();
            }
            Assert.Equal(enters, EngineCounts.Of(engine.Thread).SubmittingEnters);
        }
        Assert.Equal(File.ReadAllBytes(dir.File("expected")), File.ReadAllBytes(dir.File("actual")));
    }

    [Fact]
    public void Waiters_and_the_ring_race_for_queued_requests_and_each_request_runs_once()
    {
        // Threads waiting in GetResult take queued requests off the ring with a compare-and-swap while other threads
        // drive the ring, place requests and cancel them. A request run twice, or by nobody, shows as a wrong byte, a
        // wrong count, a hang, or an operation object handed to two requests at once (wrong bytes again).
        if (PrivateEngine.Create() is not IoUringEngine engine)
        {
            Console.WriteLine($"io_uring is not available ({IoUringEngine.UnavailableReason}): no ring to race on.");
            return;
        }
        const int Block = 4096;
        const int Blocks = 512;
        const int Rounds = 400;
        using var dir = new TempDirectory();
        string path = dir.File("data");
        static byte Pattern(int block, int i) => (byte)(block * 13 + i * 5 + (block >> 3));
        byte[] content = new byte[Blocks * Block];
        for (int i = 0; i < content.Length; i++)
        {
            content[i] = Pattern(i / Block, i % Block);
        }
        File.WriteAllBytes(path, content);
        using SafeFileHandle handle = File.OpenHandle(path, FileMode.Open, FileAccess.ReadWrite);
        int wrong = 0, cancelled = 0;
        var failures = new System.Collections.Concurrent.ConcurrentQueue<Exception>();

        void Check(byte[] buffer, int count, int block)
        {
            if (count != Block || !buffer.AsSpan().SequenceEqual(content.AsSpan(block * Block, Block)))
            {
                Interlocked.Increment(ref wrong);
            }
        }

        Thread[] threads = Enumerable.Range(0, 24).Select(t => new Thread(() =>
        {
            try
            {
                var random = new Random(t);
                byte[] buffer = new byte[Block];
                for (int round = 0; round < Rounds; round++)
                {
                    int block = random.Next(Blocks);
                    if (t % 4 == 3)
                    {
                        // Writers put back the bytes already there, so every read can check them, and wait synchronously.
                        content.AsSpan(block * Block, Block).CopyTo(buffer);
                        engine.WriteAsync(handle, buffer, (long)block * Block, useFastPath: false, CancellationToken.None).GetAwaiter().GetResult();
                        continue;
                    }
                    using var cancellation = new CancellationTokenSource();
                    bool cancel = t % 4 == 2 && round % 3 == 0;
                    Array.Clear(buffer);
                    ValueTask<int> read = engine.ReadAsync(handle, buffer, (long)block * Block, useFastPath: false, cancel ? cancellation.Token : CancellationToken.None);
                    if (cancel)
                    {
                        cancellation.Cancel(); // on the queue, in the kernel or done: each must end once
                    }
                    try
                    {
                        Check(buffer, t % 4 == 1 ? read.AsTask().GetAwaiter().GetResult() : read.GetAwaiter().GetResult(), block);
                    }
                    catch (OperationCanceledException) when (cancel)
                    {
                        Interlocked.Increment(ref cancelled);
                    }
                }
            }
            catch (Exception e)
            {
                failures.Enqueue(e);
            }
        })).ToArray();
        foreach (Thread thread in threads)
        {
            thread.Start();
        }
        foreach (Thread thread in threads)
        {
            Assert.True(thread.Join(TimeSpan.FromSeconds(60)), "a waiter never got its request's end");
        }
        Assert.Empty(failures);
        Assert.Equal(0, wrong);
        Assert.Equal(content, File.ReadAllBytes(path));
        Console.WriteLine($"{cancelled} of {6 * ((Rounds + 2) / 3)} cancelled reads ended cancelled; every other read had its bytes.");
    }

    [Fact]
    public void GetResult_before_completion_waits_for_the_result_on_the_thread_pool_engine()
    {
        // System.IO's tasks allow sync-over-async on the ValueTask itself; the engine Auto falls back to must too.
        using var dir = new TempDirectory();
        using var fifo = new Fifo(dir.File("fifo"));
        byte[] buffer = new byte[1];
        ValueTask<int> read = SpindleRandomAccess.ReadAsync(fifo.Reader, buffer, 0, IoEngine.ThreadPool);
        Assert.False(read.IsCompleted);
        Task<int> waiting = Task.Factory.StartNew(() => read.GetAwaiter().GetResult(), TaskCreationOptions.LongRunning);
        Thread.Sleep(50); // usually the waiter blocks first; either order must give the byte
        SpindleRandomAccess.Write(fifo.Writer, new byte[] { 7 }, 0);
        Assert.Equal(1, waiting.WaitAsync(Timeout).GetAwaiter().GetResult());
        Assert.Equal(7, buffer[0]);
    }

    [Fact]
    public void Inline_operations_complete_on_the_reaping_thread_and_the_others_on_pool_threads()
    {
        // A ring of the test's own: on the shared one, a pool thread that polls for another test's reads may reap the
        // inline read and rightly run it (a reaper), which this test could not tell from a pool hand-off.
        if (PrivateEngine.Create() is not IoUringEngine engine)
        {
            Console.WriteLine("io_uring is not available: no ring to complete on.");
            return;
        }
        using var reads = new InlineAndPooledReads(engine);
        var inlineThread = new TaskCompletionSource<Thread>(TaskCreationOptions.RunContinuationsAsynchronously);
        var pooledThread = new TaskCompletionSource<Thread>(TaskCreationOptions.RunContinuationsAsynchronously);
        int poller = 0;
        using var stop = new ManualResetEventSlim();
        Assert.False(reads.InlineRead.IsCompleted);
        Assert.False(reads.PooledRead.IsCompleted);
        OnCompleted(reads.InlineRead, inlineThread);
        OnCompleted(reads.PooledRead, pooledThread);

        // A storage engine's thread that polls for completions (the ring's thread may take them first).
        var polling = new Thread(() =>
        {
            Volatile.Write(ref poller, Environment.CurrentManagedThreadId);
            while (!stop.IsSet)
            {
                engine.Thread.Flush();
                Thread.Yield();
            }
        });
        polling.Start();
        try
        {
            // One after the other: until the pooled read completes, no pool thread works for this ring.
            SpindleRandomAccess.Write(reads.InlineFifo.Writer, new byte[] { 1 }, 0);
            Thread reaper = inlineThread.Task.WaitAsync(Timeout).GetAwaiter().GetResult();
            SpindleRandomAccess.Write(reads.PooledFifo.Writer, new byte[] { 2 }, 0);
            Thread pool = pooledThread.Task.WaitAsync(Timeout).GetAwaiter().GetResult();
            Assert.False(reaper.IsThreadPoolThread);
            Assert.True(reaper.ManagedThreadId == Volatile.Read(ref poller) || reaper.Name == "Spindle io_uring", $"ran on {reaper.Name}");
            // A pool thread, or the thread that stands in for a pool that left the work item waiting (StarvedPoolRescue,
            // on a loaded machine): never the reaper.
            Assert.True(pool.IsThreadPoolThread || pool.Name == "Spindle io_uring rescue", $"ran on {pool.Name}");
        }
        finally
        {
            stop.Set();
            polling.Join();
        }
    }

    [Fact]
    public void An_inline_operation_that_completed_before_its_continuation_was_registered_runs_it_on_the_registering_thread()
    {
        // A storage engine's thread starts a read, then registers its callback: the read may complete in between. The
        // inline mode runs that callback on the registering thread, where System.Threading's source core would queue it
        // to the pool (a hand-off, and on a starved pool a stall). A ring of the test's own.
        if (PrivateEngine.Create() is not IoUringEngine engine)
        {
            Console.WriteLine("io_uring is not available: no ring to complete on.");
            return;
        }
        // The ring's own thread may reap the read: it sets the result, then closes the inline slot, so the read can look
        // completed to this thread while its completion is still running there. A callback registered in that instant
        // runs once, on the completing thread, which is correct but not the case under test: then the scenario is
        // run again. Only a source that never runs a late callback on the registering thread fails every attempt.
        for (int attempt = 0; ; attempt++)
        {
            using var reads = new InlineAndPooledReads(engine);
            ValueTask<int> inlineRead = reads.InlineRead, pooledRead = reads.PooledRead;
            SpindleRandomAccess.Write(reads.InlineFifo.Writer, new byte[] { 1 }, 0);
            SpindleRandomAccess.Write(reads.PooledFifo.Writer, new byte[] { 2 }, 0);
            var deadline = DateTime.UtcNow + Timeout;
            while (!(inlineRead.IsCompleted && pooledRead.IsCompleted) && DateTime.UtcNow < deadline)
            {
                engine.Thread.Flush();
                Thread.Yield();
            }
            Assert.True(inlineRead.IsCompleted && pooledRead.IsCompleted, "the reads did not complete");

            var inlineRanOn = new TaskCompletionSource<Thread>(TaskCreationOptions.RunContinuationsAsynchronously);
            var inlineAwaiter = inlineRead.ConfigureAwait(false).GetAwaiter();
            inlineAwaiter.UnsafeOnCompleted(() =>
            {
                Assert.Equal(1, inlineAwaiter.GetResult());
                inlineRanOn.SetResult(Thread.CurrentThread);
            });
            bool ranBeforeReturn = inlineRanOn.Task.IsCompleted;
            Thread ranOn = inlineRanOn.Task.WaitAsync(Timeout).GetAwaiter().GetResult(); // exactly once, either way
            if (!ranBeforeReturn)
            {
                Assert.NotSame(Thread.CurrentThread, ranOn); // the completing thread ran it
                Assert.True(attempt < 20, "a callback registered after completion never ran on the registering thread");
                continue;
            }
            Assert.Same(Thread.CurrentThread, ranOn); // ran before UnsafeOnCompleted returned, on this thread

            // Outside the mode the registering thread does not run user code it did not ask for: a pool thread does, as
            // with any IValueTaskSource built on System.Threading's core.
            var pooledThread = new TaskCompletionSource<Thread>(TaskCreationOptions.RunContinuationsAsynchronously);
            OnCompleted(pooledRead, pooledThread);
            Thread pool = pooledThread.Task.WaitAsync(Timeout).GetAwaiter().GetResult();
            Assert.NotSame(Thread.CurrentThread, pool);
            return;
        }
    }

    // Two one-byte reads of FIFOs on a ring of a test's own, one started in the inline mode and one not; each completes
    // when a byte is written to its FIFO.
    private sealed class InlineAndPooledReads : IDisposable
    {
        private readonly TempDirectory _dir = new();

        internal InlineAndPooledReads(IoUringEngine engine)
        {
            InlineFifo = new Fifo(_dir.File("inline"));
            PooledFifo = new Fifo(_dir.File("pooled"));
            using (SpindleRandomAccess.RunCompletionsInline())
            {
                InlineRead = engine.ReadAsync(InlineFifo.Reader, new byte[1], -1, CancellationToken.None);
            }
            PooledRead = engine.ReadAsync(PooledFifo.Reader, new byte[1], -1, CancellationToken.None);
        }

        internal Fifo InlineFifo { get; }

        internal Fifo PooledFifo { get; }

        internal ValueTask<int> InlineRead { get; }

        internal ValueTask<int> PooledRead { get; }

        public void Dispose()
        {
            InlineFifo.Dispose();
            PooledFifo.Dispose();
            _dir.Dispose();
        }
    }

    private static void OnCompleted(ValueTask<int> read, TaskCompletionSource<Thread> ranOn)
    {
        ConfiguredValueTaskAwaitable<int>.ConfiguredValueTaskAwaiter awaiter = read.ConfigureAwait(false).GetAwaiter();
        awaiter.UnsafeOnCompleted(() =>
        {
            awaiter.GetResult();
            ranOn.SetResult(Thread.CurrentThread);
        });
    }

    // As a run of continuations does: what this thread submits to the ring waits for the end of the run, so a request
    // stays off the kernel until its waiter takes it.
    private readonly struct HeldSubmissions : IDisposable
    {
        private readonly RingThread? _outer;

        private HeldSubmissions(RingThread? outer) => _outer = outer;

        internal static HeldSubmissions On(RingThread ring) => new(RingThread.EnterDrain(ring));

        public void Dispose()
        {
            RingThread.LeaveDrain(_outer);
            RingThread.ReleaseHeld();
        }
    }

    [Fact]
    public async Task An_awaited_read_on_an_idle_ring_has_a_pool_thread_asked_to_poll_for_it_before_it_completes()
    {
        if (PrivateEngine.Create() is not IoUringEngine engine)
        {
            Console.WriteLine($"io_uring is not available ({IoUringEngine.UnavailableReason}): no ring to poll.");
            return;
        }
        using var dir = new TempDirectory();
        string path = dir.File("data");
        byte[] content = new byte[8192];
        new Random(5).NextBytes(content);
        File.WriteAllBytes(path, content);
        using SafeFileHandle handle = File.OpenHandle(path, FileMode.Open, FileAccess.Read);
        // One read through the kernel first; then the ring is idle: its own thread asleep in the kernel, no run of continuations.
        await engine.ReadAsync(handle, new byte[1], 0, useFastPath: false, CancellationToken.None);
        Assert.True(SpinWait.SpinUntil(() => EngineCounts.Of(engine.Thread).IsSleeping && !engine.Thread.Completions.HasDrains, Timeout), "the ring never went idle");

        byte[] buffer = new byte[4096];
        Task<int> awaited;
        EngineCounts.Of(engine.Thread).HoldPending = true; // the read waits in its lane: it cannot complete before it is awaited
        try
        {
            ValueTask<int> read = engine.ReadAsync(handle, buffer, 4096, useFastPath: false, CancellationToken.None);
            Assert.False(read.IsCompleted);
            awaited = read.AsTask(); // registers a continuation, as an await does
            // A run of continuations was queued while the read is still to be done, so that the pool thread that will run
            // the continuation reaps the completion, rather than the ring's thread reaping it and only then waking one.
            Assert.True(engine.Thread.Completions.HasDrains);
        }
        finally
        {
            EngineCounts.Of(engine.Thread).HoldPending = false;
        }
        engine.Thread.Flush(runInline: false);
        Assert.Equal(4096, await awaited.WaitAsync(Timeout));
        Assert.Equal(content.AsSpan(4096).ToArray(), buffer);
    }

    [Fact]
    public async Task A_read_left_for_the_reaper_goes_in_when_awaited_without_waiting_for_the_write_in_the_kernel()
    {
        if (PrivateEngine.Create() is not IoUringEngine engine)
        {
            Console.WriteLine($"io_uring is not available ({IoUringEngine.UnavailableReason}): no ring to submit to.");
            return;
        }
        using var dir = new TempDirectory();
        using Beyond.ScratchMount? mount = Beyond.ScratchMount.TryCreateOnImage(dir.File("ext4"), "ext4", 64L << 20, _output);
        if (mount is null || !Freeze(mount.Path, frozen: true) || !Freeze(mount.Path, frozen: false))
        {
            Console.WriteLine("no ext4 image to freeze (needs root, loop devices and fsfreeze): no write that stays in the kernel.");
            return;
        }
        string readPath = Path.Combine(mount.Path, "read");
        byte[] content = new byte[8192];
        new Random(9).NextBytes(content);
        File.WriteAllBytes(readPath, content);
        using SafeFileHandle reader = File.OpenHandle(readPath, FileMode.Open, FileAccess.Read);
        using SafeFileHandle writer = SpindleFile.OpenHandle(Path.Combine(mount.Path, "write"),
            new SpindleFileOptions { Mode = FileMode.Create, Access = FileAccess.ReadWrite, DirectIO = true });
        using IMemoryOwner<byte> block = AlignedMemoryPool.Shared.Rent(4096);

        // The ring's own thread asleep in the kernel first: a thread starting up drives the ring once and would place the read.
        Assert.True(SpinWait.SpinUntil(() => EngineCounts.Of(engine.Thread).IsSleeping, Timeout), "the ring's thread never went to sleep");
        Assert.True(Freeze(mount.Path, frozen: true));
        ValueTask write;
        try
        {
            // An O_DIRECT write to a frozen file system waits in the kernel until it thaws: a request in flight that
            // will not complete on its own.
            write = engine.WriteAsync(writer, block.Memory[..4096], 0, useFastPath: false, CancellationToken.None);
            Assert.Equal(1, engine.Thread.RegularInFlight);
            byte[] buffer = new byte[4096];
            ValueTask<int> read = engine.ReadAsync(reader, buffer, 4096, useFastPath: false, CancellationToken.None);
            Assert.Equal(1, engine.Thread.QueuedRegular); // left for whoever reaps the write's completion
            Task<int> awaited = read.AsTask(); // registers a continuation, as an await does
            Assert.Equal(0, engine.Thread.QueuedRegular); // in the kernel beside the write, from the awaiting thread
            Assert.Equal(4096, await awaited.WaitAsync(Timeout));
            Assert.Equal(content.AsSpan(4096).ToArray(), buffer);
            Assert.False(write.IsCompleted);
        }
        finally
        {
            Freeze(mount.Path, frozen: false);
        }
        await write.AsTask().WaitAsync(Timeout);
        Assert.Equal(block.Memory.Span[..4096].ToArray(), File.ReadAllBytes(Path.Combine(mount.Path, "write")));
    }

    // fsfreeze -f (true) or -u (false) on the mount; false when the command failed or is missing.
    private static bool Freeze(string mountPath, bool frozen)
        => SystemCommand.Run("fsfreeze", $"{(frozen ? "-f" : "-u")} {mountPath}").Code == 0;
}
