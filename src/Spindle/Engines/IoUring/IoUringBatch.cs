using Spindle.Diagnostics;

namespace Spindle.Engines.IoUring;

/// <summary>
/// One batch of reads on the io_uring engine and the one <see cref="ValueTask"/> its caller awaits. Each read writes its
/// result and counts down; the caller holds a count while it starts them, so the batch cannot complete half-started.
/// The last count completes it: directly, for a thread waiting in <c>GetResult</c>, or through the completion queue, so
/// the continuation runs once, on the pool. Pooled: no allocation per batch.
/// </summary>
internal sealed class IoUringBatch : PooledTaskSource<bool>, IThreadPoolWorkItem, IRingWaitable
{
    private static readonly OperationPool<IoUringBatch> s_pool = new(64);

    private IoUringEngine _engine = null!;         // whose dispatcher runs the continuation
    private Memory<BatchReadResult> _results;      // the caller's results; default while pooled
    private int[] _ringBytes = new int[32];        // bytes read by each request that ran on the ring, -1 for the others (metrics)
    private int _count;                            // requests in the batch
    private int _remaining;                        // requests not completed, plus the caller's own count while it starts them
    private volatile bool _cancelled;              // a read was cancelled by the batch's token
    private CancellationToken _cancellationToken;
    private CompletionHandOff _handOff;            // who completes the task once the last read is done

    /// <summary>A batch of <paramref name="count"/> requests whose results go to <paramref name="results"/>.</summary>
    internal static IoUringBatch Rent(IoUringEngine engine, Memory<BatchReadResult> results, int count, CancellationToken cancellationToken)
    {
        IoUringBatch batch = s_pool.TryRent() ?? new IoUringBatch();
        batch._engine = engine;
        batch._results = results;
        batch._count = count;
        batch._remaining = count + 1;
        batch._cancelled = false;
        batch._cancellationToken = cancellationToken;
        batch._handOff.Reset();
        if (batch._ringBytes.Length < count)
        {
            batch._ringBytes = new int[Math.Max(count, batch._ringBytes.Length * 2)];
        }
        Array.Fill(batch._ringBytes, -1, 0, count);
        return batch;
    }

    /// <summary>Records request <paramref name="index"/>'s outcome (any thread; once per request).</summary>
    internal void MemberCompleted(int index, long bytes, Exception? error, bool onRing)
    {
        if (error is null)
        {
            _results.Span[index] = new BatchReadResult((int)bytes);
            if (onRing)
            {
                _ringBytes[index] = (int)bytes;
            }
        }
        else
        {
            _results.Span[index] = new BatchReadResult(error);
            if (error is OperationCanceledException && _cancellationToken.IsCancellationRequested)
            {
                _cancelled = true;
            }
        }
        if (Interlocked.Decrement(ref _remaining) == 0)
        {
            RingThread ring = _engine.Thread; // read first: a waiter may recycle the batch as soon as it completes
            if (!_handOff.TryHandToWaiter(out bool waiterPolls))
            {
                ring.Completions.Post(this);
                return;
            }
            Complete(true, Error()); // no continuation is registered while a thread waits: no user code runs here
            if (waiterPolls)
            {
                ring.KickPoller();
            }
        }
    }

    ref CompletionHandOff IRingWaitable.HandOff => ref _handOff;

    /// <summary>
    /// <c>GetResult</c> before completion: the caller polls the ring itself unless another thread does. Reads a run of
    /// continuations held back for its next wait, which this thread now will not reach, go to the kernel first.
    /// </summary>
    private protected override void WaitForCompletion(short token)
    {
        RingThread ring = _engine.Thread;
        if (RingThread.HoldsBack)
        {
            RingThread.ReleaseHeld();
            ring.Flush(runInline: false);
        }
        switch (_handOff.BeginWait())
        {
            case CompletionHandOff.Wait.Pending:
                ring.WaitFor(this, token, mayPoll: true);
                RecordMetrics();
                return;
            case CompletionHandOff.Wait.TakeQueued:
                RecordMetrics(); // completed and queued for a pool thread that has not run it: done here (its entry is skipped)
                Complete(true, Error());
                return;
            default:
                CompletionHandOff.SpinUntilCompleted(this, token);
                return;
        }
    }

    // Awaited while its reads are in the kernel: a pool thread will run the continuation, and should reap them (RingThread.Awaited).
    private protected override void OnAwaited() => _engine.Thread.Awaited();

    /// <summary>The caller has started every request: its task, or a completed one when nothing is left running.</summary>
    internal ValueTask Release()
    {
        short version = Version;
        if (Interlocked.Decrement(ref _remaining) != 0)
        {
            return new ValueTask(this, version);
        }
        RecordMetrics();
        bool cancelled = _cancelled;
        CancellationToken token = _cancellationToken;
        Recycle();
        return cancelled ? ValueTask.FromCanceled(token) : default;
    }

    /// <summary>Runs on a pool thread once every request completed: metrics (listeners may run any code), then the caller's continuation.</summary>
    void IThreadPoolWorkItem.Execute()
    {
        // A stale entry does nothing: its waiter took the batch, which may be in use again (that use's own entry, if it
        // is queued too, finds it taken).
        if (_handOff.TryTakeQueued())
        {
            RecordMetrics();
            Complete(true, Error());
        }
    }

    private OperationCanceledException? Error() => _cancelled ? new OperationCanceledException(_cancellationToken) : null;

    private void RecordMetrics()
    {
        for (int i = 0; i < _count; i++)
        {
            if (_ringBytes[i] >= 0)
            {
                SpindleMetrics.Operation(IoEngine.IoUring, IoDirection.Read, _ringBytes[i], IoMechanism.Ring);
            }
        }
    }

    private protected override void Recycle()
    {
        _results = default;
        _cancellationToken = default;
        _engine = null!;
        s_pool.Return(this);
    }
}
