using Spindle.Diagnostics;

namespace Spindle.Tests.Metrics;

/// <summary>The totals behind the meter count every addition of every thread, also after the thread has ended.</summary>
public class ThreadCounterTests
{
    [Fact]
    public void Concurrent_additions_are_all_counted()
    {
        var counter = new ThreadCounter();
        const int Threads = 4, Additions = 200_000;
        using var start = new Barrier(Threads);
        var threads = Enumerable.Range(0, Threads).Select(_ => new Thread(() =>
        {
            start.SignalAndWait();
            for (int i = 0; i < Additions; i++)
            {
                counter.Add(3);
            }
        })).ToList();
        threads.ForEach(t => t.Start());
        threads.ForEach(t => t.Join());

        Assert.Equal(3L * Threads * Additions, counter.Read());
    }

    [Fact]
    public void A_thread_that_ended_keeps_its_count_and_its_slot_is_released()
    {
        var counter = new ThreadCounter();
        counter.Add(5);
        for (int i = 0; i < 10; i++)
        {
            var thread = new Thread(() => counter.Add(7));
            thread.Start();
            thread.Join();
        }
        Assert.Equal(75, counter.Read());

        // An ended thread's count moves to the total of ended threads once its thread statics are collected.
        var waited = System.Diagnostics.Stopwatch.StartNew();
        while (counter.LiveThreads > 1 && waited.Elapsed < TimeSpan.FromSeconds(30))
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        Assert.Equal(1, counter.LiveThreads);
        Assert.Equal(75, counter.Read());
        counter.Add(1);
        Assert.Equal(76, counter.Read());
    }
}
