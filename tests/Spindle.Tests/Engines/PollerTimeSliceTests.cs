using System.Globalization;
using Spindle.Engines;
using Spindle.Engines.IoUring;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Engines;

/// <summary>
/// The pool thread that runs a ring's continuations (and polls the ring when it runs dry) asks the scheduler for a
/// short time slice while it does, and gets its own back when it stops: the user code it runs later sees no change.
/// Read from the kernel's own account of each thread (<c>/proc/self/task/TID/sched</c>, <c>se.slice</c>).
/// </summary>
public class PollerTimeSliceTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task A_pool_thread_running_a_rings_continuations_asks_for_the_short_slice()
    {
        if (PrivateEngine.Create() is not IoUringEngine engine)
        {
            Console.WriteLine($"io_uring is not available ({IoUringEngine.UnavailableReason}): no ring to poll.");
            return;
        }
        long? ownSlice = SliceOf(TestLibc.GetTid()); // a thread that never asked for one
        if (ownSlice is null)
        {
            Console.WriteLine("this kernel has no per-thread slice (se.slice): nothing to ask for.");
            return;
        }
        using var dir = new TempDirectory();
        using var fifo = new Fifo(dir.File("fifo"));
        var seen = new TaskCompletionSource<long?>(TaskCreationOptions.RunContinuationsAsynchronously);
        ValueTask<int> read = engine.ReadAsync(fifo.Reader, new byte[1], 0, useFastPath: false, CancellationToken.None);
        Assert.False(read.IsCompleted);
        read.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(() => // on the thread that completes it, not the test framework's context
            seen.TrySetResult(SliceOf(TestLibc.GetTid())));
        SpindleRandomAccess.Write(fifo.Writer, new byte[] { 1 }, 0);
        Assert.Equal(EngineTunables.PollerSliceMicroseconds * 1_000L, await seen.Task.WaitAsync(Timeout));
    }

    [Fact]
    public void A_thread_that_stops_polling_gets_its_own_slice_and_nice_value_back()
    {
        int tid = TestLibc.GetTid();
        long? ownSlice = SliceOf(tid);
        if (ownSlice is null)
        {
            Console.WriteLine("this kernel has no per-thread slice (se.slice): nothing to ask for.");
            return;
        }
        Exception? failure = null;
        var thread = new Thread(() =>
        {
            try
            {
                int self = TestLibc.GetTid();
                Assert.Equal(0, TestLibc.SetPriority(0, self, 3)); // a nice value of its own, which the poller's slice keeps
                long? before = SliceOf(self);
                using (PollerTimeSlice.Begin())
                {
                    Assert.Equal(EngineTunables.PollerSliceMicroseconds * 1_000L, SliceOf(self));
                    Assert.Equal(3, TestLibc.GetPriority(0, self));
                    // A thread it starts meanwhile (as a pool starts a new worker) gets the default slice, not the poller's.
                    long? child = null;
                    var started = new Thread(() => child = SliceOf(TestLibc.GetTid()));
                    started.Start();
                    started.Join();
                    Assert.Equal(before, child);
                }
                Assert.Equal(before, SliceOf(self));
                Assert.Equal(3, TestLibc.GetPriority(0, self));
            }
            catch (Exception e)
            {
                failure = e;
            }
        });
        thread.Start();
        Assert.True(thread.Join(Timeout));
        Assert.Null(failure);
    }

    // The thread's slice in ns, or null where the kernel does not report one.
    private static long? SliceOf(int tid)
    {
        string path = $"/proc/self/task/{tid}/sched";
        if (!File.Exists(path))
        {
            return null;
        }
        foreach (string line in File.ReadLines(path))
        {
            if (line.StartsWith("se.slice", StringComparison.Ordinal))
            {
                return long.Parse(line[(line.IndexOf(':') + 1)..].Trim(), CultureInfo.InvariantCulture);
            }
        }
        return null;
    }
}
