using System.Collections.Concurrent;

namespace Spindle.Engines.IoUring;

/// <summary>
/// Operations of one class not yet on the ring, and how many of that class are in the kernel, within the class's own
/// budget of CQ slots. Entries carry the operation's generation, which tells a stale entry (cancelled while queued,
/// perhaps reused since) apart.
/// </summary>
internal sealed class PendingLane
{
    private readonly ConcurrentQueue<(RingOperation Operation, uint Generation)> _queue = new();
    // Taken from the queue but not yet placed for want of room. (ConcurrentQueue.TryPeek is avoided:
    // it pins the queue's segment and makes every later enqueue allocate.)
    private (RingOperation Operation, uint Generation)? _carried;

    /// <summary>The most operations of this class the kernel may hold at once.</summary>
    internal int Budget { get; set; }

    private int _inFlight;

    /// <summary>Operations of this class in the kernel now (set by the ring thread; any thread may read it).</summary>
    internal int InFlight
    {
        get => Volatile.Read(ref _inFlight);
        set => Volatile.Write(ref _inFlight, value);
    }

    internal bool HasRoom => InFlight < Budget;

    /// <summary>Whether an operation waits and there is room for it (ring thread).</summary>
    internal bool CanPlace => HasRoom && (_carried is not null || !_queue.IsEmpty);

    /// <summary>Queues an armed operation (any thread).</summary>
    internal void Enqueue(RingOperation operation)
    {
        Interlocked.Increment(ref _queued);
        _queue.Enqueue((operation, operation.Generation));
    }

    private int _queued; // entries enqueued and not yet taken (stale ones included)

    /// <summary>About how many operations wait in the lane (any thread).</summary>
    internal int Queued => Volatile.Read(ref _queued);

    /// <summary>The next live entry (ring thread); stale entries of completed operations are dropped.</summary>
    internal bool TryTake(out (RingOperation Operation, uint Generation) entry)
    {
        do
        {
            if (_carried is { } carried)
            {
                entry = carried;
                _carried = null;
            }
            else if (_queue.TryDequeue(out entry))
            {
                Interlocked.Decrement(ref _queued);
            }
            else
            {
                return false;
            }
        }
        while (!entry.Operation.IsQueued(entry.Generation));
        return true;
    }

    /// <summary>Puts back the operation just taken, to be placed first next time (ring thread).</summary>
    internal void CarryOver(RingOperation operation, uint generation) => _carried = (operation, generation);
}
