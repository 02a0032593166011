using Spindle.Engines;

namespace Spindle.Tests.Engines;

/// <summary>
/// Where completions run when the thread pool cannot take them (<see cref="ContinuationDispatcher"/>): the
/// dispatcher is given a pool that never runs what it is handed, the state of a pool whose every thread
/// blocks on a read (sync-over-async). Each test counts events, never durations.
/// </summary>
public class ContinuationDispatcherTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    private sealed class Completion : IThreadPoolWorkItem
    {
        public ManualResetEventSlim Ran { get; } = new();
        public int ThreadId { get; private set; }

        public void Execute()
        {
            ThreadId = Environment.CurrentManagedThreadId;
            Ran.Set();
        }
    }

    // Before: every completion waited for the watchdog to see it stuck (a stall each), so reads that callers
    // block pool threads on ran at the watchdog's pace, not the device's (about 400 reads/s, where System.IO
    // ran 14,000-74,000). Now the first stall is enough: later completions wake an idle rescue thread at once.
    [Fact]
    public void Once_the_pool_is_seen_starved_later_completions_do_not_each_wait_for_a_stall()
    {
        const int Completions = 40;
        var dispatcher = new ContinuationDispatcher("test starved pool", queueToPool: static _ => { });
        for (int i = 0; i < Completions; i++)
        {
            var completion = new Completion();
            dispatcher.Post(completion);
            Assert.True(completion.Ran.Wait(Timeout), $"completion {i} never ran");
            Assert.NotEqual(Environment.CurrentManagedThreadId, completion.ThreadId);
        }
        // One stall per completion without the rule; a loaded machine may delay a rescue thread into a second.
        Assert.InRange(dispatcher.Stalls, 1, Completions / 4);
    }

    // The pool serving again ends the rescue: a completion a pool thread takes clears the starved state,
    // and the completions after it are left to the pool (here it runs them on the posting thread).
    [Fact]
    public void A_completion_the_pool_takes_ends_the_rescue()
    {
        var handed = new System.Collections.Concurrent.ConcurrentQueue<IThreadPoolWorkItem>();
        bool poolServes = false;
        var dispatcher = new ContinuationDispatcher("test recovering pool", queueToPool: item =>
        {
            if (Volatile.Read(ref poolServes))
            {
                item.Execute(); // a pool thread runs it right away
            }
            else
            {
                handed.Enqueue(item);
            }
        });

        var first = new Completion();
        dispatcher.Post(first);
        Assert.True(first.Ran.Wait(Timeout));
        long stallsWhileStarved = dispatcher.Stalls;
        Assert.True(stallsWhileStarved >= 1);

        Volatile.Write(ref poolServes, true);
        // A rescue thread still draining may take one or two more; then every completion is the pool's.
        int inARow = 0;
        for (int posted = 0; posted < 10_000 && inARow < 20; posted++)
        {
            var completion = new Completion();
            dispatcher.Post(completion);
            Assert.True(completion.Ran.Wait(Timeout));
            inARow = completion.ThreadId == Environment.CurrentManagedThreadId ? inARow + 1 : 0;
        }
        Assert.Equal(20, inARow);
        Assert.Equal(stallsWhileStarved, dispatcher.Stalls);
    }
}
