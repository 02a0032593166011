using System.Collections.Concurrent;
using Spindle.Diagnostics;

namespace Spindle.Engines.IoUring;

/// <summary>
/// Completed operations whose continuations wait for a pool thread, and the one work item that runs them, as the
/// runtime's socket engine hands epoll's events to the pool (<c>SocketAsyncEngine.Unix.cs</c>): a reaper posts, and
/// queues the work item only when none is queued; the work item runs continuations one after another, queuing one
/// helper while more remain, so continuations still use every core. What the continuations start is submitted
/// together when the queue runs dry, or once a request has waited 20 µs, by the same pool thread, which also takes what
/// the kernel has ready (<see cref="RingThread.Flush"/>) without waking anyone; it returns when nothing is left. A run yields its thread after
/// <see cref="EngineTunables.CompletionTimeSliceMilliseconds"/>, queuing a successor, so that other work items get the pool too.
/// </summary>
internal sealed class CompletionQueue : IThreadPoolWorkItem
{
    private readonly RingThread _ring;
    private readonly ConcurrentQueue<(IThreadPoolWorkItem Item, uint Generation)> _ready = new();
    private int _requested; // 1 while a work item is queued and has not started

    internal CompletionQueue(RingThread ring)
    {
        _ring = ring;
        Rescue = new StarvedPoolRescue(this);
    }

    /// <summary>Runs the queue on a thread of its own when the pool does not start its work item (a starved pool).</summary>
    internal StarvedPoolRescue Rescue { get; }

    /// <summary>Whether no completion waits.</summary>
    internal bool IsEmpty => _ready.IsEmpty;

    /// <summary>
    /// Queues a completion (any thread; never blocks, never runs user code). An operation's entry carries its
    /// <paramref name="generation"/>: a waiter may take the operation first (<see cref="RingOperation.RunQueued"/>
    /// then skips the stale entry).
    /// </summary>
    internal void Post(IThreadPoolWorkItem completion, uint generation = 0)
    {
        _ready.Enqueue((completion, generation));
        EngineProbe.Current?.CompletionPosted(_ring);
        Schedule();
    }

    private void Schedule()
    {
        if (Interlocked.CompareExchange(ref _requested, 1, 0) == 0)
        {
            System.Threading.ThreadPool.UnsafeQueueUserWorkItem(this, preferLocal: false);
            Rescue.Requested();
        }
    }

    void IThreadPoolWorkItem.Execute()
    {
        // Visible before the first look at the queue: a poster that saw a work item requested and queued none
        // relies on this run seeing its completion.
        Interlocked.Exchange(ref _requested, 0);
        Rescue.Started();
        int start = Environment.TickCount;
        RingThread? outer = RingThread.EnterDrain(_ring);
        try
        {
            while (true)
            {
                if (!_ready.TryDequeue(out var entry))
                {
                    // Dry: submit what the continuations started, take what is ready, and go on if that was anything.
                    RingThread.ReleaseHeld();
                    _ring.Flush();
                    if (!_ready.TryDequeue(out entry))
                    {
                        return;
                    }
                }
                if (!_ready.IsEmpty)
                {
                    Schedule(); // a helper for the rest, in case this continuation runs long or blocks
                }
                Run(entry);
                if (RingThread.HeldBackLong)
                {
                    // Behind continuations that work, waiting for the queue to run dry kept the device idle (one core,
                    // 100 µs of work: a third of System.IO's reads).
                    RingThread.ReleaseHeld();
                    _ring.Flush();
                }
                if (Environment.TickCount - start >= EngineTunables.CompletionTimeSliceMilliseconds)
                {
                    if (!_ready.IsEmpty)
                    {
                        Schedule();
                    }
                    return;
                }
            }
        }
        finally
        {
            RingThread.LeaveDrain(outer);
            RingThread.ReleaseHeld();
            _ring.Flush(); // what the last continuations started goes to the kernel now
        }
    }

    private static void Run((IThreadPoolWorkItem Item, uint Generation) entry)
    {
        if (entry.Item is RingOperation operation)
        {
            operation.RunQueued(entry.Generation);
        }
        else
        {
            entry.Item.Execute(); // an exception here is the user's: it ends the process, as on any pool thread
        }
    }
}
