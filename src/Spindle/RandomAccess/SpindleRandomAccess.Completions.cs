using Spindle.Engines;
using Spindle.Engines.IoUring;

namespace Spindle;

public static partial class SpindleRandomAccess
{
    /// <summary>
    /// Until the returned scope is disposed, the asynchronous operations the calling thread starts on the io_uring engine
    /// run their continuations on the thread that takes their completion from the ring — the ring's own thread, a thread
    /// calling <see cref="PollCompletions"/>, or one waiting for another operation — instead of a thread-pool thread (as
    /// <c>PipeScheduler.Inline</c> does for pipes). Use it only for continuations that are short and never block, such as a
    /// storage engine's completion callback that only signals: a continuation that blocks there holds back every other
    /// completion of the process. Operations that complete at once, or on another engine, are not affected.
    /// </summary>
    /// <returns>The scope; dispose it on the same thread, before the thread starts operations that must not complete inline.</returns>
    /// <example><code>
    /// using (SpindleRandomAccess.RunCompletionsInline())
    /// {
    ///     awaiter = SpindleRandomAccess.ReadAsync(handle, buffer, offset).ConfigureAwait(false).GetAwaiter();
    /// }
    /// awaiter.UnsafeOnCompleted(onRead); // onRead may run on the reaping thread
    /// </code></example>
    public static InlineCompletionScope RunCompletionsInline()
    {
        InlineCompletions.Enter();
        return new InlineCompletionScope(Environment.CurrentManagedThreadId);
    }

    /// <summary>
    /// Takes the io_uring completions that are ready now on the calling thread, without blocking, and submits any
    /// requests still waiting to reach the kernel: completions of operations started in the inline mode
    /// (<see cref="RunCompletionsInline"/>) run their continuations here; the others go to the thread pool, and a
    /// thread waiting for one is woken. A storage engine's thread that polls its device for completions calls this
    /// instead of waiting for the ring's thread to deliver them.
    /// </summary>
    /// <returns>How many operations completed during the call (0 when nothing was ready or io_uring is not running).</returns>
    public static int PollCompletions()
        => Portable.PassThrough.Enabled || IoUringEngine.Running is not IoUringEngine ring ? 0 : ring.Thread.Flush();
}

/// <summary>The scope of <see cref="SpindleRandomAccess.RunCompletionsInline"/>: disposing it ends the inline mode on the thread that began it.</summary>
public readonly struct InlineCompletionScope : IDisposable
{
    private readonly int _threadId; // the thread that began the scope; 0 for a default value, which does nothing

    internal InlineCompletionScope(int threadId) => _threadId = threadId;

    /// <summary>Ends the inline mode this scope began.</summary>
    /// <exception cref="InvalidOperationException">Called on another thread than the one that began the scope.</exception>
    public void Dispose()
    {
        if (_threadId == 0)
        {
            return;
        }
        if (_threadId != Environment.CurrentManagedThreadId)
        {
            throw new InvalidOperationException("An inline completion scope must be disposed on the thread that began it.");
        }
        InlineCompletions.Leave();
    }
}
