using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Engines;
using Spindle.Engines.IoUring;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Engines;

/// <summary>
/// io_uring runs continuations on the thread pool, never on the ring's thread; user code that blocks
/// there must never stop the ring or the other completions (when the pool is starved, the stall
/// watchdog hands them to rescue threads).
/// </summary>
public class InlineCompletionTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    private static (TempDirectory Dir, SafeFileHandle File, byte[] Data) CreateFile()
    {
        var dir = new TempDirectory();
        string path = dir.File("data");
        byte[] data = new byte[8192];
        Random.Shared.NextBytes(data);
        File.WriteAllBytes(path, data);
        return (dir, File.OpenHandle(path, FileMode.Open, FileAccess.Read), data);
    }

    // A continuation registered on a read of an empty pipe: it runs on the thread that completes the
    // read (a pool thread), whatever the timing, once the test writes a byte.
    private static void OnPipeRead(IoUringEngine engine, Fifo fifo, Action continuation)
    {
        ValueTask<int> pending = engine.ReadAsync(fifo.Reader, new byte[1], 0, useFastPath: false, CancellationToken.None);
        Assert.False(pending.IsCompleted);
        Continue(pending, continuation);
        SpindleRandomAccess.Write(fifo.Writer, new byte[] { 1 }, 0);
    }

    [Fact]
    public async Task A_continuation_that_waits_synchronously_for_another_read_completes()
    {
        if (PrivateEngine.Create() is not IoUringEngine engine)
        {
            Console.WriteLine($"io_uring is not available ({IoUringEngine.UnavailableReason}): no ring thread to block.");
            return;
        }
        var (dir, file, data) = CreateFile();
        using (dir)
        using (file)
        using (var fifo = new Fifo(dir.File("fifo")))
        {
            var done = new TaskCompletionSource<(bool PoolThread, int Read)>(TaskCreationOptions.RunContinuationsAsynchronously);
            byte[] second = new byte[4096];
            OnPipeRead(engine, fifo, () =>
            {
                bool pool = Thread.CurrentThread.Name != "Spindle io_uring"; // a pool thread, or a rescue thread when the pool is busy
                // Sync-over-async on the thread that runs continuations.
                int read = engine.ReadAsync(file, second, 4096, useFastPath: false, CancellationToken.None).AsTask().Result;
                done.SetResult((pool, read));
            });
            var (thread, count) = await done.Task.WaitAsync(Timeout);
            Assert.True(thread);
            Assert.Equal(4096, count);
            Assert.Equal(data[4096..], second);
        }
    }

    [Fact]
    public async Task A_continuation_blocked_for_ever_does_not_stop_other_operations()
    {
        if (PrivateEngine.Create() is not IoUringEngine engine)
        {
            Console.WriteLine($"io_uring is not available ({IoUringEngine.UnavailableReason}): no ring thread to block.");
            return;
        }
        var (dir, file, data) = CreateFile();
        using (dir)
        using (file)
        using (var fifo = new Fifo(dir.File("fifo")))
        using (var release = new ManualResetEventSlim())
        {
            var entered = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);
            var left = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            OnPipeRead(engine, fifo, () =>
            {
                entered.SetResult(Thread.CurrentThread.Name != "Spindle io_uring");
                release.Wait(); // user code holding the thread that ran its continuation
                left.SetResult();
            });
            Assert.True(await entered.Task.WaitAsync(Timeout));

            // Other operations still complete, many of them, while that continuation blocks.
            byte[] buffer = new byte[4096];
            for (int i = 0; i < 100; i++)
            {
                Assert.Equal(4096, await engine.ReadAsync(file, buffer, 4096, useFastPath: false, CancellationToken.None).AsTask().WaitAsync(Timeout));
            }
            Assert.Equal(data[4096..], buffer);
            Assert.False(left.Task.IsCompleted);
            release.Set();
            await left.Task.WaitAsync(Timeout);
        }
    }

    [Fact]
    public async Task Completions_reaped_beside_a_blocked_continuation_do_not_wait_for_it()
    {
        // Two reads complete together, and each one's continuation waits until the other's has run:
        // whichever runs first blocks its thread, so the other must run elsewhere rather than wait
        // behind it. Two streams over one full pipe — a writer blocked in write(2), its reader's
        // completion behind it — hung this way when one thread ran every continuation.
        if (PrivateEngine.Create() is not IoUringEngine engine)
        {
            Console.WriteLine($"io_uring is not available ({IoUringEngine.UnavailableReason}): no ring thread to block.");
            return;
        }
        using var dir = new TempDirectory();
        using var trigger = new Fifo(dir.File("trigger"));
        using var first = new Fifo(dir.File("first"));
        using var second = new Fifo(dir.File("second"));
        using var firstRan = new ManualResetEventSlim();
        using var secondRan = new ManualResetEventSlim();
        var finished = new TaskCompletionSource<bool[]>(TaskCreationOptions.RunContinuationsAsynchronously);
        var results = new bool[2];
        int left = 2;
        void Both(int index, ManualResetEventSlim mine, ManualResetEventSlim other)
        {
            mine.Set();
            results[index] = other.Wait(Timeout);
            if (Interlocked.Decrement(ref left) == 0)
            {
                finished.SetResult(results);
            }
        }
        OnPipeRead(engine, trigger, () =>
        {
            Continue(engine.ReadAsync(first.Reader, new byte[1], 0, useFastPath: false, CancellationToken.None), () => Both(0, firstRan, secondRan));
            Continue(engine.ReadAsync(second.Reader, new byte[1], 0, useFastPath: false, CancellationToken.None), () => Both(1, secondRan, firstRan));
            SpindleRandomAccess.Write(first.Writer, new byte[] { 1 }, 0);
            SpindleRandomAccess.Write(second.Writer, new byte[] { 2 }, 0);
        });
        bool[] ran = await finished.Task.WaitAsync(Timeout);
        Assert.Equal(new[] { true, true }, ran);
    }

    // Runs the continuation on the thread that completes the read. ConfigureAwait(false): not posted
    // to the test framework's synchronization context.
    private static void Continue(ValueTask<int> pending, Action continuation)
    {
        ConfiguredValueTaskAwaitable<int>.ConfiguredValueTaskAwaiter awaiter = pending.ConfigureAwait(false).GetAwaiter();
        awaiter.UnsafeOnCompleted(() =>
        {
            awaiter.GetResult();
            continuation();
        });
    }
}
