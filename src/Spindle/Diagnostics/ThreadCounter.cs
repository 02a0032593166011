using System.Runtime.CompilerServices;

namespace Spindle.Diagnostics;

/// <summary>
/// A process-wide total that many threads add to on hot paths. Each thread adds to a count of its own with a
/// plain write: no atomic instruction and no cache line shared with another thread, so counting costs a read
/// operation next to nothing. Reading (rare: tests and diagnostics) sums the threads' counts under a lock. When
/// a thread ends, its count moves into the total of ended threads, so the total never goes down and the counts
/// kept are those of live threads (the runtime keeps <c>ThreadPool.CompletedWorkItemCount</c> the same way).
/// </summary>
internal sealed class ThreadCounter
{
    private static int s_lastId = -1;

    // This thread's counts, one slot per counter; its finalizer runs once the thread has ended.
    [ThreadStatic]
    private static ThreadCounts? t_counts;

    private readonly int _id = Interlocked.Increment(ref s_lastId);
    private readonly object _gate = new();
    private readonly List<Count> _live = [];
    private long _ended;

    internal void Add(long value)
    {
        Count count = t_counts is { } counts && (uint)_id < (uint)counts.Slots.Length && counts.Slots[_id] is { } mine ? mine : Register();
        // Only this thread writes its count; the volatile write keeps a 64-bit value whole for readers on 32-bit platforms.
        Volatile.Write(ref count.Value, count.Value + value);
    }

    internal long Read()
    {
        lock (_gate)
        {
            long total = _ended;
            foreach (Count count in _live)
            {
                total += Volatile.Read(ref count.Value);
            }
            return total;
        }
    }

    /// <summary>How many threads' counts are kept apart (tests: that an ended thread's count was folded in).</summary>
    internal int LiveThreads
    {
        get
        {
            lock (_gate)
            {
                return _live.Count;
            }
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private Count Register()
    {
        ThreadCounts counts = t_counts ??= new ThreadCounts();
        if (counts.Slots.Length <= _id)
        {
            Array.Resize(ref counts.Slots, _id + 8);
        }
        var count = new Count(this);
        lock (_gate)
        {
            _live.Add(count);
        }
        counts.Slots[_id] = count;
        return count;
    }

    private void End(Count count)
    {
        lock (_gate)
        {
            _ended += count.Value;
            _live.Remove(count);
        }
    }

    private sealed class Count(ThreadCounter owner)
    {
        internal readonly ThreadCounter Owner = owner;
        internal long Value;
    }

    // Reachable only from its thread's static: finalized after the thread ends, when its counts can no longer change.
    private sealed class ThreadCounts
    {
        internal Count?[] Slots = new Count?[8];

        ~ThreadCounts()
        {
            foreach (Count? count in Slots)
            {
                count?.Owner.End(count);
            }
        }
    }
}
