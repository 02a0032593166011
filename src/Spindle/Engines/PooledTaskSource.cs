using System.Threading.Tasks.Sources;

namespace Spindle.Engines;

/// <summary>
/// The <see cref="IValueTaskSource{T}"/> contract every pooled operation of the engines shares: completion, a
/// synchronous wait for a caller that asks for the result first (sync-over-async, which System.IO allows too), and the
/// return to the pool once the result is taken. Continuations run on the thread that completes the operation.
/// </summary>
internal abstract class PooledTaskSource<T> : IValueTaskSource<T>, IValueTaskSource
{
    // Marks the inline slot of a completed operation: a continuation registered after it runs on the registering thread.
    private static readonly Action<object?> s_completed = static _ => { };

    private ManualResetValueTaskSourceCore<T> _core;
    private int _waiting;                       // 1 while a thread blocks in GetResult before completion
    private ManualResetEventSlim? _completed;   // what that thread waits on; made once, reused
    private Action<object?>? _inlineContinuation; // the inline mode's continuation, or s_completed; see OnCompleted
    private object? _inlineState;

    /// <summary>
    /// The inline mode (set before the operation starts): the continuation runs on the completing thread or, registered
    /// after completion, on the registering one, where <see cref="ManualResetValueTaskSourceCore{TResult}"/> would use the pool.
    /// </summary>
    internal bool Inline { get; set; }

    /// <summary>The version the operation's <see cref="ValueTask"/> must carry; read before the operation is started.</summary>
    internal short Version => _core.Version;

    /// <summary>Completes the task with <paramref name="result"/> or <paramref name="error"/>, and wakes a thread that waits for it.</summary>
    private protected void Complete(T result, Exception? error)
    {
        if (error is null)
        {
            _core.SetResult(result);
        }
        else
        {
            _core.SetException(error);
        }
        // Pairs with the fence in WaitUntilCompleted: either the waiter sees the result, or we see it waiting.
        Interlocked.MemoryBarrier();
        if (Volatile.Read(ref _waiting) != 0)
        {
            _completed!.Set();
        }
        if (Inline && Interlocked.Exchange(ref _inlineContinuation, s_completed) is { } continuation)
        {
            continuation(_inlineState); // registered before completion: it runs here, where the operation completed
        }
    }

    /// <summary>Blocks until <see cref="Complete"/> when the result is asked for first; the ring's operations first try to reap it themselves.</summary>
    private protected virtual void WaitForCompletion(short token) => WaitUntilCompleted(token);

    /// <summary>Blocks the calling thread until <see cref="Complete"/> has run for this version.</summary>
    public void WaitUntilCompleted(short token)
    {
        ManualResetEventSlim completed = _completed ??= new ManualResetEventSlim(false, spinCount: 1);
        completed.Reset();
        Volatile.Write(ref _waiting, 1);
        Interlocked.MemoryBarrier();
        // A late Set from the object's previous use may wake us early: wait again until the result is there.
        while (_core.GetStatus(token) == ValueTaskSourceStatus.Pending)
        {
            completed.Wait();
            completed.Reset();
        }
        _waiting = 0;
    }

    /// <summary>Whether the task of <paramref name="token"/> has completed.</summary>
    public bool HasCompleted(short token) => _core.GetStatus(token) != ValueTaskSourceStatus.Pending;

    /// <summary>Forgets what the operation held and gives it back to its pool (the result has been taken; never touch it afterwards).</summary>
    private protected abstract void Recycle();

    public ValueTaskSourceStatus GetStatus(short token) => _core.GetStatus(token);

    /// <summary>An awaiter is about to register its continuation before completion (a subclass may arrange who will run it).</summary>
    private protected virtual void OnAwaited()
    {
    }

    public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
    {
        OnAwaited();
        if (!Inline || !RunsAnywhere(flags) || _core.Version != token)
        {
            _core.OnCompleted(continuation, state, token, flags);
            return;
        }
        // The inline mode keeps its continuation itself: the core would queue one registered after completion to the
        // pool, a hand-off the mode exists to avoid (a storage engine's thread that starts a read and then registers
        // its callback races with the thread that reaps it).
        _inlineState = state;
        if (Interlocked.CompareExchange(ref _inlineContinuation, continuation, null) is not null)
        {
            _inlineState = null;
            continuation(state); // completed meanwhile: the registering thread runs it
        }
    }

    // Whether a continuation with these flags may run on whichever thread completes the operation: no execution context
    // to restore, and no scheduling context that would want it elsewhere.
    private static bool RunsAnywhere(ValueTaskSourceOnCompletedFlags flags)
        => (flags & ValueTaskSourceOnCompletedFlags.FlowExecutionContext) == 0
           && ((flags & ValueTaskSourceOnCompletedFlags.UseSchedulingContext) == 0
               || (SynchronizationContext.Current is null && TaskScheduler.Current == TaskScheduler.Default));

    public T GetResult(short token)
    {
        if (!HasCompleted(token))
        {
            WaitForCompletion(token);
        }
        try
        {
            return _core.GetResult(token);
        }
        finally
        {
            _core.Reset();
            _inlineContinuation = null;
            _inlineState = null;
            Recycle();
        }
    }

    void IValueTaskSource.GetResult(short token) => GetResult(token);
}

/// <summary>A pooled operation that transfers bytes: its task is a <see cref="ValueTask{Int32}"/>, a <see cref="ValueTask{Int64}"/> or a <see cref="ValueTask"/>.</summary>
internal abstract class TransferTaskSource : PooledTaskSource<long>, IValueTaskSource<int>
{
    int IValueTaskSource<int>.GetResult(short token) => (int)GetResult(token);
}
