namespace Spindle.Engines.IoUring;

/// <summary>
/// The operations one leader completed in a pass over the CQ ring, whose continuations it then runs
/// one by one. Each entry is claimed exactly once, by the leader (<see cref="TryClaim"/>) or, when a
/// continuation blocked and the watchdog took the ring, by the watchdog (<see cref="CloseAndTakeRest"/>),
/// which hands the unclaimed rest to the completion threads: completions that arrived beside a
/// blocked continuation never wait for it (a reader's completion behind a writer blocked on the same
/// full pipe would otherwise wait for ever).
/// </summary>
internal sealed class CompletionBatch
{
    // Past any count: a closed batch gives the leader nothing more.
    private const int Closed = int.MaxValue / 2;

    private IoUringOperation?[] _items = new IoUringOperation?[64];
    private int _count;   // written by the owning leader before it runs the batch
    private int _cursor;  // the next entry to claim; one atomic increment (or exchange) per claim

    /// <summary>Whether there is nothing to run.</summary>
    internal bool IsEmpty => _count == 0;

    /// <summary>Adds a completed operation (the owning leader, while it reaps; never while the batch runs).</summary>
    internal void Add(IoUringOperation operation)
    {
        if (_count == _items.Length)
        {
            Array.Resize(ref _items, _items.Length * 2);
        }
        _items[_count++] = operation;
    }

    /// <summary>Whether the entry claimed last was the batch's last (the owning leader, while it runs the batch).</summary>
    internal bool RunningLast => Volatile.Read(ref _cursor) >= _count;

    /// <summary>Claims the next entry (the owning leader); false when none is left or the watchdog closed the batch.</summary>
    internal bool TryClaim(out IoUringOperation operation)
    {
        int index = Interlocked.Increment(ref _cursor) - 1;
        if (index < _count)
        {
            operation = _items[index]!;
            return true;
        }
        operation = null!;
        return false;
    }

    /// <summary>
    /// Closes the batch and hands every entry not claimed yet to <paramref name="completions"/> (the
    /// watchdog, after taking the ring from the leader that owns the batch, before promoting anyone:
    /// the owner cannot lead, and so reset the batch, until a later promotion).
    /// </summary>
    internal void CloseAndTakeRest(WorkerThreads completions)
    {
        int from = Interlocked.Exchange(ref _cursor, Closed);
        for (int i = from; i < _count; i++)
        {
            completions.Queue(_items[i]!);
        }
    }

    /// <summary>Empties the batch for the next pass (the owning leader, while it leads).</summary>
    internal void Reset()
    {
        Array.Clear(_items, 0, _count); // pooled operations: hold no stale references
        _count = 0;
        Volatile.Write(ref _cursor, 0);
    }
}
