using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;

namespace Spindle.Streams;

/// <summary>
/// A layer stacked on the OS strategy that holds data of its own: the ordinary buffer, the O_DIRECT window or the
/// atomic-append buffer. It owns the lifetime rules they share: asynchronous operations take turns through one
/// lock (synchronous ones too where the kernel uses the layer's memory: the O_DIRECT window); Dispose waits for
/// the operation whose turn it is (the kernel may be using the layer's memory), writes
/// what is buffered, closes the layer below and releases the layer's memory, also when the handle was closed
/// first; a forgotten stream does the same from its finalizer. Each layer keeps only its buffering.
/// </summary>
internal abstract class StackedFileStreamStrategy : FileStreamStrategy
{
    // The layer below: owns the handle and the position. Typed as the OS layer (the only one a layer is stacked on)
    // so that its sealed members (IsClosed, CanRead, CanWrite) are direct calls the JIT inlines on every call.
    private protected readonly OSFileStreamStrategy _os;
    // Whose turn it is: serialises asynchronous operations (and synchronous ones, see SyncCallsTakeTurns) with
    // Dispose; created on first use, by an operation or by Dispose, whichever comes first.
    private SemaphoreSlim? _turns;

    private protected StackedFileStreamStrategy(OSFileStreamStrategy os) => _os = os;

    public sealed override bool CanRead => _os.CanRead;

    public sealed override bool CanWrite => _os.CanWrite;

    public sealed override bool CanSeek => _os.CanSeek;

    internal sealed override bool IsAsync => _os.IsAsync;

    internal sealed override bool IsClosed => _os.IsClosed;

    internal sealed override string Name => _os.Name;

    internal sealed override IoEngine Engine => _os.Engine;

    // Buffered bytes must reach the file even when the stream is never disposed, and the layer's memory must be freed.
    internal sealed override bool RequiresFinalizer => true;

    internal sealed override void Lock(long position, long length) => _os.Lock(position, length);

    internal sealed override void Unlock(long position, long length) => _os.Unlock(position, length);

    /// <summary>Whoever uses the handle directly must see the buffered writes and the stream's position.</summary>
    internal sealed override SafeFileHandle SafeFileHandle
    {
        get
        {
            bool inTurn = EnterSyncTurn();
            try
            {
                if (!_os.IsClosed)
                {
                    FlushBuffers();
                }
            }
            finally
            {
                if (inTurn)
                {
                    EndTurn();
                }
            }
            return _os.SafeFileHandle;
        }
    }

    internal sealed override void Flush(bool flushToDisk)
    {
        EnsureNotClosed();
        bool inTurn = EnterSyncTurn();
        try
        {
            EnsureNotClosed();
            FlushBuffers();
        }
        finally
        {
            if (inTurn)
            {
                EndTurn();
            }
        }
        _os.Flush(flushToDisk);
    }

    public sealed override Task FlushAsync(CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return Task.FromCanceled(cancellationToken);
        }
        EnsureNotClosed();
        return FlushInTurnAsync(cancellationToken);
    }

    private async Task FlushInTurnAsync(CancellationToken cancellationToken)
    {
        await Turns.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            EnsureNotClosed(); // disposed while this flush waited for its turn
            await FlushBuffersAsync(cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            EndTurn();
        }
    }

    /// <summary>
    /// Whether synchronous calls take turns too: true for a layer whose memory the kernel reads into and writes
    /// from, so that a Dispose on another thread cannot free it under a synchronous call. The ordinary and the
    /// atomic-append buffers are managed arrays (and the ordinary buffer's calls are the hot path): false.
    /// </summary>
    private protected virtual bool SyncCallsTakeTurns => false;

    /// <summary>Takes the turn for a synchronous call if <see cref="SyncCallsTakeTurns"/>; returns whether it did.</summary>
    private protected bool EnterSyncTurn()
    {
        if (!SyncCallsTakeTurns)
        {
            return false;
        }
        Turns.Wait();
        return true;
    }

    /// <summary>Writes the layer's pending bytes and gives back read-ahead; the OS caches are not flushed. Called in the caller's turn.</summary>
    private protected abstract void FlushBuffers();

    /// <summary><see cref="FlushBuffers"/> on the engine; called in the caller's turn.</summary>
    private protected abstract ValueTask FlushBuffersAsync(CancellationToken cancellationToken);

    /// <summary>
    /// Gives back the layer's memory, when no operation can use it any more. Runs on every Dispose (a second one
    /// included), so it must give memory back once however often it runs.
    /// </summary>
    private protected virtual void ReleaseMemory()
    {
    }

    // ---- The asynchronous lock ----

    /// <summary>The lock operations take turns with; created once even when two threads ask at once.</summary>
    private protected SemaphoreSlim Turns =>
        Volatile.Read(ref _turns) ??
        Interlocked.CompareExchange(ref _turns, new SemaphoreSlim(1, 1), null) ??
        _turns;

    /// <summary>Ends an operation's turn.</summary>
    private protected void EndTurn() => _turns!.Release();

    // ---- Checks ----

    [MethodImpl(MethodImplOptions.AggressiveInlining)] // on the buffered layer's hot paths
    private protected void EnsureNotClosed()
    {
        if (_os.IsClosed)
        {
            ThrowHelper.ThrowFileClosed();
        }
    }

    // CanRead and CanWrite are false once the handle is closed: asked first, a Dispose racing with the call still
    // gives ObjectDisposedException rather than NotSupportedException.
    private protected void EnsureReadable()
    {
        if (!_os.CanRead)
        {
            EnsureNotClosed();
            StreamThrowHelper.ThrowUnreadable();
        }
    }

    private protected void EnsureWritable()
    {
        if (!_os.CanWrite)
        {
            EnsureNotClosed();
            StreamThrowHelper.ThrowUnwritable();
        }
    }

    // ---- Array forms (the asynchronous and APM ones are FileStreamStrategy's): each layer implements the span forms ----

    public override int Read(byte[] buffer, int offset, int count) => Read(new Span<byte>(buffer, offset, count));

    public override void Write(byte[] buffer, int offset, int count) => Write(new ReadOnlySpan<byte>(buffer, offset, count));

    public override void WriteByte(byte value) => Write(new ReadOnlySpan<byte>(in value));

    // ---- Disposal ----

    protected sealed override void Dispose(bool disposing)
    {
        // The operation whose turn it is may have the kernel reading into or writing from the layer's memory: wait
        // for it; operations queued behind Dispose then find the stream closed. Operations on a regular file always
        // end; a read on a pipe, socket or terminal may wait for ever, and there (where only the ordinary buffer, a
        // managed array, is stacked) Dispose does not wait for it, as FileStream's does not (DisposeAsync does, as
        // FileStream's). A finalizer never waits: while an operation runs, it (or its continuation) keeps the stream
        // reachable, so none runs when the finalizer does. The lock is created here if no operation has yet: an
        // asynchronous call starting on another thread must find the one Dispose holds, or it could buffer its bytes
        // after Dispose wrote the buffer out and report them written.
        bool wait = disposing && (SyncCallsTakeTurns || _os is SeekableFileStreamStrategy);
        SemaphoreSlim? turn = wait ? Turns : null;
        turn?.Wait();
        try
        {
            if (!_os.IsClosed)
            {
                try
                {
                    FlushBuffers();
                }
                catch (Exception e) when (!disposing && e is IOException or UnauthorizedAccessException or NotSupportedException)
                {
                    // A finalizer cannot report a failed flush; System.IO drops it too.
                }
                finally
                {
                    _os.DisposeInternal(disposing);
                }
            }
        }
        finally
        {
            ReleaseMemory();
            turn?.Release();
        }
    }

    public sealed override async ValueTask DisposeAsync()
    {
        SemaphoreSlim turn = Turns; // created if no operation has yet, as in Dispose
        await turn.WaitAsync().ConfigureAwait(false);
        try
        {
            if (!_os.IsClosed)
            {
                try
                {
                    await FlushBuffersAsync(CancellationToken.None).ConfigureAwait(false);
                }
                finally
                {
                    await _os.DisposeAsync().ConfigureAwait(false);
                }
            }
        }
        finally
        {
            ReleaseMemory();
            turn.Release();
        }
    }
}
