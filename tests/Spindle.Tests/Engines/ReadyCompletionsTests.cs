using System.Diagnostics;
using Spindle.Engines;

namespace Spindle.Tests.Engines;

/// <summary>
/// The order in which completed operations' continuations are taken (<see cref="ReadyCompletions"/>):
/// newest first, so that under overload most continuations run at once, but none waits longer than
/// <see cref="ReadyCompletions.MaxWait"/> behind newer ones. Clocks are given, so nothing depends on timing.
/// </summary>
public class ReadyCompletionsTests
{
    private static readonly long MaxWaitTicks = (long)(ReadyCompletions.MaxWait.TotalSeconds * Stopwatch.Frequency);

    private sealed class Item(int id) : IThreadPoolWorkItem
    {
        public int Id { get; } = id;
        public void Execute() { }
    }

    private static int Take(ReadyCompletions ready, long now)
    {
        Assert.True(ready.TryTake(now, out IThreadPoolWorkItem item));
        return ((Item)item).Id;
    }

    [Fact]
    public void Completions_that_waited_less_than_the_limit_are_taken_newest_first()
    {
        var ready = new ReadyCompletions();
        for (int i = 0; i < 5; i++)
        {
            ready.Add(new Item(i), postedAt: i);
        }
        long now = 10;
        Assert.Equal([4, 3, 2, 1, 0], Enumerable.Range(0, 5).Select(_ => Take(ready, now)));
        Assert.True(ready.IsEmpty);
        Assert.False(ready.TryTake(now, out _));
    }

    [Fact]
    public void A_completion_that_waited_longer_than_the_limit_goes_before_newer_ones_oldest_first()
    {
        var ready = new ReadyCompletions();
        ready.Add(new Item(0), postedAt: 0);
        ready.Add(new Item(1), postedAt: 1);
        ready.Add(new Item(2), postedAt: MaxWaitTicks);
        ready.Add(new Item(3), postedAt: MaxWaitTicks + 1);
        long now = MaxWaitTicks + 2; // items 0 and 1 have waited longer than the limit
        Assert.Equal(0, Take(ready, now));
        Assert.Equal(1, Take(ready, now));
        Assert.Equal(3, Take(ready, now));
        Assert.Equal(2, Take(ready, now));
    }

    [Fact]
    public void Growing_keeps_every_completion_and_the_order()
    {
        var ready = new ReadyCompletions();
        const int count = 1000; // more than the initial room, with the ring's head moved first
        ready.Add(new Item(-1), postedAt: 0);
        Assert.Equal(-1, Take(ready, MaxWaitTicks + 1));
        for (int i = 0; i < count; i++)
        {
            ready.Add(new Item(i), postedAt: i);
        }
        Assert.Equal(count, ready.Count);
        // Nothing too old: newest first, all of them, each once.
        int[] taken = Enumerable.Range(0, count).Select(_ => Take(ready, count)).ToArray();
        Assert.Equal(Enumerable.Range(0, count).Reverse(), taken);
        Assert.True(ready.IsEmpty);
    }
}
