using System.Diagnostics;
using System.Runtime.CompilerServices;

namespace Spindle.Engines;

/// <summary>
/// The completions whose continuations wait for a thread, taken newest first unless the oldest has
/// waited longer than <see cref="MaxWait"/>: then oldest first. While threads keep up, at most a few
/// completions wait and the order does not matter. When continuations' work exceeds the cores, a queue
/// taken oldest first makes every completion wait behind all the others (each read's latency becomes
/// the whole backlog's work); newest first serves most completions at once and lets a few wait, up to
/// <see cref="MaxWait"/>, which bounds the worst wait (the thread pool's own order for work a pool
/// thread queues, newest first on that thread, bounds nothing). This is the adaptive-LIFO rule of
/// servers under overload.
/// </summary>
internal sealed class ReadyCompletions
{
    /// <summary>How long a completion may wait before it is taken ahead of newer ones.</summary>
    internal static readonly TimeSpan MaxWait = TimeSpan.FromMilliseconds(100);

    private static readonly long s_maxWaitTicks = (long)(MaxWait.TotalSeconds * Stopwatch.Frequency);

    private readonly Lock _lock = new();
    private Entry[] _entries = new Entry[256]; // a ring: _head is the oldest, _head + _count - 1 the newest
    private int _head;
    private int _count;

    private struct Entry
    {
        public IThreadPoolWorkItem Item;
        public long PostedAt;
    }

    /// <summary>Whether no completion waits.</summary>
    internal bool IsEmpty => Volatile.Read(ref _count) == 0;

    /// <summary>How many completions wait.</summary>
    internal int Count => Volatile.Read(ref _count);

    /// <summary>Adds a completion (any thread).</summary>
    internal void Add(IThreadPoolWorkItem item) => Add(item, Stopwatch.GetTimestamp());

    /// <summary>Adds a completion posted at <paramref name="postedAt"/> (<see cref="Stopwatch"/> ticks; tests give their own clock).</summary>
    internal void Add(IThreadPoolWorkItem item, long postedAt)
    {
        lock (_lock)
        {
            if (_count == _entries.Length)
            {
                Grow();
            }
            ref Entry entry = ref _entries[(_head + _count) & (_entries.Length - 1)];
            entry.Item = item;
            entry.PostedAt = postedAt;
            Volatile.Write(ref _count, _count + 1);
        }
    }

    /// <summary>Takes the next completion to run, or false when none waits.</summary>
    internal bool TryTake(out IThreadPoolWorkItem item) => TryTake(Stopwatch.GetTimestamp(), out item);

    /// <summary>Takes the next completion to run as of <paramref name="now"/> (<see cref="Stopwatch"/> ticks).</summary>
    internal bool TryTake(long now, out IThreadPoolWorkItem item)
    {
        lock (_lock)
        {
            if (_count == 0)
            {
                item = null!;
                return false;
            }
            int mask = _entries.Length - 1;
            ref Entry oldest = ref _entries[_head];
            ref Entry taken = ref now - oldest.PostedAt > s_maxWaitTicks
                ? ref oldest
                : ref _entries[(_head + _count - 1) & mask];
            item = taken.Item;
            taken.Item = null!; // the pooled operation must not stay reachable from here
            if (Unsafe.AreSame(ref taken, ref oldest))
            {
                _head = (_head + 1) & mask;
            }
            Volatile.Write(ref _count, _count - 1);
            return true;
        }
    }

    private void Grow()
    {
        var larger = new Entry[_entries.Length * 2];
        for (int i = 0; i < _count; i++)
        {
            larger[i] = _entries[(_head + i) & (_entries.Length - 1)];
        }
        _entries = larger;
        _head = 0;
    }
}
