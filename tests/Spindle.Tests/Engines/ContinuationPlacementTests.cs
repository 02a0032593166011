using System.Diagnostics.Metrics;
using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Engines.IoUring;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Engines;

/// <summary>
/// Where io_uring continuations run: on the thread pool, as System.IO's do, never on the thread the
/// ring depends on. So a metrics listener that blocks stops no one else's reads, a continuation's
/// exception ends the process, and thread state a continuation sets does not stay behind for others.
/// Every wait here is a deadlock detector, never a duration bound.
/// </summary>
[Collection(SerialCollection.Name)]
public class ContinuationPlacementTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    private static (TempDirectory Dir, SafeFileHandle File) CreateFile()
    {
        var dir = new TempDirectory();
        string path = dir.File("data");
        File.WriteAllBytes(path, new byte[8192]);
        return (dir, File.OpenHandle(path, FileMode.Open, FileAccess.Read));
    }

    [Fact]
    public async Task A_blocked_metrics_listener_does_not_stop_unrelated_io_uring_reads()
    {
        if (PrivateEngine.Create() is not IoUringEngine engine)
        {
            Console.WriteLine($"io_uring is not available ({IoUringEngine.UnavailableReason}): no ring to stop.");
            return;
        }
        var (dir, file) = CreateFile();
        using (dir)
        using (file)
        using (var entered = new ManualResetEventSlim())
        using (var release = new ManualResetEventSlim())
        using (var listener = new MeterListener())
        {
            int armed = 1;
            listener.InstrumentPublished = (instrument, l) =>
            {
                if (instrument.Meter.Name == "Spindle" && instrument.Name == "spindle.io.operations")
                {
                    l.EnableMeasurementEvents(instrument);
                }
            };
            listener.SetMeasurementEventCallback<long>((_, _, _, _) =>
            {
                // The first measurement after arming blocks until the test lets it go (an exporter
                // stuck on its network, say), on whatever thread recorded it.
                if (Interlocked.Exchange(ref armed, 0) == 1)
                {
                    entered.Set();
                    release.Wait();
                }
            });
            listener.Start();
            try
            {
                Task<int> first = engine.ReadAsync(file, new byte[4096], 0, useFastPath: false, CancellationToken.None).AsTask();
                Assert.True(await Task.Run(() => entered.Wait(Timeout)), "no measurement was recorded");

                // While the listener is blocked, other reads on the same ring complete.
                byte[] buffer = new byte[4096];
                for (int i = 0; i < 20; i++)
                {
                    Assert.Equal(4096, await engine.ReadAsync(file, buffer, 4096, useFastPath: false, CancellationToken.None).AsTask().WaitAsync(Timeout));
                }
                Assert.False(release.IsSet);
                release.Set();
                Assert.Equal(4096, await first.WaitAsync(Timeout));
            }
            finally
            {
                release.Set();
            }
        }
    }

    [Fact]
    public async Task Thread_state_a_continuation_sets_is_not_seen_by_the_next_continuations()
    {
        if (PrivateEngine.Create() is not IoUringEngine engine)
        {
            Console.WriteLine($"io_uring is not available ({IoUringEngine.UnavailableReason}): no ring thread.");
            return;
        }
        var (dir, file) = CreateFile();
        using (dir)
        using (file)
        {
            var local = new AsyncLocal<string?>();
            var context = new RecordingContext();
            // Raw continuations (no execution context flows) that leave state on their threads; several,
            // so that the last ones run warm and short wherever they run.
            for (int i = 0; i < 5; i++)
            {
                var set = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
                Continue(engine.ReadAsync(file, new byte[4096], 0, useFastPath: false, CancellationToken.None), () =>
                {
                    SynchronizationContext.SetSynchronizationContext(context);
                    local.Value = "left behind";
                    set.SetResult();
                });
                await set.Task.WaitAsync(Timeout);
            }

            // The continuations after it, wherever they run, see none of it.
            for (int i = 0; i < 200; i++)
            {
                var seen = new TaskCompletionSource<(SynchronizationContext? Context, string? Local)>(TaskCreationOptions.RunContinuationsAsynchronously);
                Continue(engine.ReadAsync(file, new byte[4096], 0, useFastPath: false, CancellationToken.None),
                    () => seen.SetResult((SynchronizationContext.Current, local.Value)));
                var (current, value) = await seen.Task.WaitAsync(Timeout);
                Assert.Null(current);
                Assert.Null(value);
            }
            Assert.Equal(0, context.Posts);
        }
    }

    // Each case in a child process: an unhandled exception ends it, and a foreground thread would keep it alive.
    [Theory]
    [InlineData("system")]
    [InlineData("iouring")]
    public void A_continuation_that_throws_ends_the_process_like_System_IO(string engine)
    {
        var (exitCode, output) = ChildProcess.Run(typeof(ContinuationPlacementTests), nameof(ThrowInContinuation), null, engine);
        Assert.Contains("unhandled=boom from a continuation", output);
        Assert.DoesNotContain("survived", output);
        Assert.NotEqual(0, exitCode);
    }

    [Theory]
    [InlineData("system")]
    [InlineData("iouring")]
    public void A_continuation_that_clears_IsBackground_does_not_keep_the_process_alive(string engine)
    {
        // ChildProcess.Run gives up (and the test fails) when the child does not exit.
        var (exitCode, output) = ChildProcess.Run(typeof(ContinuationPlacementTests), nameof(ClearIsBackgroundInContinuation), null, engine);
        Assert.Contains("returned", output);
        Assert.Equal(0, exitCode);
    }

    /// <summary>Child: a read whose continuation throws; the process must die before it prints "survived".</summary>
    public static int ThrowInContinuation(string[] args)
    {
        AppDomain.CurrentDomain.UnhandledException += (_, e) => Console.WriteLine($"unhandled={(e.ExceptionObject as Exception)?.Message}");
        using var child = ChildRead(args[0]);
        if (child is null)
        {
            Console.WriteLine("unhandled=boom from a continuation (io_uring is not available)");
            return 1;
        }
        Continue(child.Read(), () => throw new InvalidOperationException("boom from a continuation"));
        Thread.Sleep(10_000);
        Console.WriteLine("survived");
        return 0;
    }

    /// <summary>Child: a read whose continuation makes its thread a foreground thread; Main then returns.</summary>
    public static int ClearIsBackgroundInContinuation(string[] args)
    {
        using var child = ChildRead(args[0]);
        if (child is not null)
        {
            using var done = new ManualResetEventSlim();
            Continue(child.Read(), () =>
            {
                Thread.CurrentThread.IsBackground = false;
                done.Set();
            });
            done.Wait();
        }
        Console.WriteLine("returned");
        Console.Out.Flush();
        return 0;
    }

    private static ChildReader? ChildRead(string engine)
    {
        if (engine == "iouring" && !SpindleRandomAccess.IsIoUringAvailable)
        {
            return null;
        }
        return new ChildReader(engine == "system");
    }

    private sealed class ChildReader : IDisposable
    {
        private readonly bool _system;
        private readonly string _path = Path.Combine(Path.GetTempPath(), "spindle-continuation-" + Guid.NewGuid().ToString("N"));
        private readonly SafeFileHandle _handle;

        internal ChildReader(bool system)
        {
            _system = system;
            File.WriteAllBytes(_path, new byte[4096]);
            // O_DIRECT where the file system allows it: no page-cache answer on the caller's thread.
            _handle = File.OpenHandle(_path, FileMode.Open, FileAccess.Read);
        }

        internal ValueTask<int> Read()
            => _system
                ? System.IO.RandomAccess.ReadAsync(_handle, new byte[4096], 0)
                : IoUringEngine.Instance!.ReadAsync(_handle, new byte[4096], 0, useFastPath: false, CancellationToken.None);

        public void Dispose()
        {
            _handle.Dispose();
            File.Delete(_path);
        }
    }

    // Runs the continuation on the thread that completes the read, with no execution context flowing.
    private static void Continue(ValueTask<int> pending, Action continuation)
    {
        ConfiguredValueTaskAwaitable<int>.ConfiguredValueTaskAwaiter awaiter = pending.ConfigureAwait(false).GetAwaiter();
        awaiter.UnsafeOnCompleted(() =>
        {
            awaiter.GetResult();
            continuation();
        });
    }

    private sealed class RecordingContext : SynchronizationContext
    {
        private int _posts;

        internal int Posts => Volatile.Read(ref _posts);

        public override void Post(SendOrPostCallback d, object? state)
        {
            Interlocked.Increment(ref _posts);
            base.Post(d, state);
        }
    }
}
