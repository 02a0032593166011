using System.Runtime.CompilerServices;
using System.Runtime.ExceptionServices;
using System.Runtime.Versioning;
using Microsoft.Win32.SafeHandles;
using Spindle.Handles;
using Spindle.Interop;
using Spindle.Syscalls;

namespace Spindle;

/// <summary>
/// Durable appends of framed records (<see cref="AppendLog"/>'s frames) with group commit: the records of
/// concurrent callers go out in one <c>write(2)</c> to an <c>O_APPEND</c> handle followed by one
/// <c>fdatasync</c>, and each caller's task completes when its own record is on the device.
/// </summary>
/// <remarks>
/// <para>Leader and followers, with no timer: a caller that finds no write in progress writes what is queued
/// (its own record and any that arrived before it took them) and syncs, on its own thread, so a lone caller pays
/// one write and one <c>fdatasync</c>. Callers that arrive meanwhile queue their frames in a buffer and wait;
/// when the write in progress ends, a pool thread writes and syncs everything queued in one go.</para>
/// <para>A record is acknowledged only once the write that holds it and the sync after it succeeded. When a write
/// stops part way (a full disk), the records wholly written before the error are synced and acknowledged and the
/// others fail; when the sync fails, every record of that write fails. A failed record may still be found in the
/// file by a scan (its bytes were written, their durability is unknown). Other processes may append to the same
/// file; their records are theirs to sync.</para>
/// </remarks>
public sealed class AppendLogWriter
{
    private const int InitialBufferSize = 64 * 1024;

    /// <summary>
    /// The largest buffer kept once its commit is done; a larger one (grown for a large record or a large burst) is
    /// dropped for one of <see cref="InitialBufferSize"/>, so that one large record does not hold its size for the
    /// writer's life. Allocating 64 KiB again is small beside the write and the sync of more than this.
    /// </summary>
    private const int MaxKeptBufferSize = 1024 * 1024;

    private readonly SafeFileHandle _handle;
    private readonly Drain _drain;                        // the pool threads' work item; private so that no caller can queue it
    private readonly Lock _lock = new();
    private byte[] _queued = new byte[InitialBufferSize]; // frames waiting for the next write, [0, _queuedLength)
    private int _queuedLength;
    private Commit? _queuedCommit;                        // the commit the queued frames will share; null while none queued
    private byte[]? _spare = new byte[InitialBufferSize]; // the other buffer; null while the leader writes from it
    private bool _leading;                                // a write and sync are in progress (inline or on a pool thread)

    /// <summary>A writer that appends to <paramref name="handle"/>, which must be opened with <see cref="SpindleFileOptions.AtomicAppend"/>.</summary>
    /// <param name="handle">The log file's handle; the writer does not own it, and it must stay open while appends run.</param>
    /// <exception cref="ArgumentNullException"><paramref name="handle"/> is null.</exception>
    /// <exception cref="ArgumentException">The handle is invalid or was not opened for appending (<c>O_APPEND</c>).</exception>
    /// <exception cref="ObjectDisposedException">The handle is closed.</exception>
    /// <exception cref="PlatformNotSupportedException">Not on Linux.</exception>
    [SupportedOSPlatform("linux")]
    public AppendLogWriter(SafeFileHandle handle)
    {
        AppendLog.ValidateAppendHandle(handle);
        _handle = handle;
        _drain = new Drain(this);
    }

    /// <summary>
    /// Appends <paramref name="payload"/> as one frame and completes when the frame is on the storage device
    /// (written and covered by an <c>fdatasync</c>), sharing the write and the sync with concurrent callers.
    /// </summary>
    /// <param name="payload">The record; it is copied before the call returns.</param>
    /// <param name="cancellationToken">Cancels the append before its frame is queued; a queued frame is written and synced regardless.</param>
    /// <returns>A task that completes when the record is durable, or fails with the error of the write or sync that held it.</returns>
    /// <exception cref="ArgumentException">The payload is longer than <see cref="AppendLog.MaxPayloadLength"/>.</exception>
    /// <exception cref="IOException">The write or the sync that held the record failed (the errno is the HResult); the record is not acknowledged.</exception>
    /// <exception cref="ObjectDisposedException">The handle was closed.</exception>
    public ValueTask AppendDurableAsync(ReadOnlyMemory<byte> payload, CancellationToken cancellationToken = default)
    {
        if (payload.Length > AppendLog.MaxPayloadLength)
        {
            throw new ArgumentException($"A record holds at most {AppendLog.MaxPayloadLength} bytes.", nameof(payload));
        }
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled(cancellationToken);
        }
        int frameLength = AppendLog.GetMaxFrameLength(payload.Length); // room enough; the frame may be shorter
        Commit? commit;
        long end;   // where this frame ends in its commit's bytes
        bool lead;
        lock (_lock)
        {
            if (_queued.Length - _queuedLength < frameLength)
            {
                byte[] larger = new byte[Math.Max(_queued.Length * 2, _queuedLength + frameLength)];
                _queued.AsSpan(0, _queuedLength).CopyTo(larger);
                _queued = larger;
            }
            _queuedLength += AppendLog.WriteFrame(payload.Span, _queued.AsSpan(_queuedLength));
            end = _queuedLength;
            lead = !_leading;
            _leading = true;
            // The leader learns its outcome from the commit it runs itself; only waiting callers share an object.
            commit = lead ? null : _queuedCommit ??= new Commit();
        }
        if (commit is null)
        {
            // The leader's frame is in the commit it runs now: nobody else takes queued frames while it leads.
            CommitOutcome outcome = CommitQueued();
            HandOff();
            outcome.ThrowIfNotCovered(end, _handle);
            return default;
        }
        if (commit.Task.IsCompleted)
        {
            commit.Outcome.ThrowIfNotCovered(end, _handle);
            return default;
        }
        return AwaitCommitAsync(commit, end);
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask AwaitCommitAsync(Commit commit, long end)
    {
        await commit.Task.ConfigureAwait(false);
        commit.Outcome.ThrowIfNotCovered(end, _handle);
    }

    /// <summary>The leader's loop on a pool thread (<see cref="Drain"/>): commit what is queued until nothing is.</summary>
    private void CommitUntilEmpty()
    {
        do
        {
            CommitQueued();
        }
        while (StillQueued());
    }

    // After the inline leader's commit: frames that arrived meanwhile go to a pool thread, so that this caller returns now.
    private void HandOff()
    {
        if (StillQueued())
        {
            ThreadPool.UnsafeQueueUserWorkItem(_drain, preferLocal: false);
        }
    }

    /// <summary>The work item a pool thread runs to lead the commits queued while the inline leader wrote; one per writer.</summary>
    private sealed class Drain(AppendLogWriter writer) : IThreadPoolWorkItem
    {
        public void Execute() => writer.CommitUntilEmpty();
    }

    // Whether frames wait; when none do, gives up leadership under the lock, so that the next caller leads.
    private bool StillQueued()
    {
        lock (_lock)
        {
            if (_queuedLength > 0)
            {
                return true;
            }
            _leading = false;
            return false;
        }
    }

    /// <summary>One group commit: takes every queued frame, writes them with one <c>write(2)</c> and syncs once. Only the leader calls it.</summary>
    private CommitOutcome CommitQueued()
    {
        byte[] frames;
        int length;
        Commit? commit;
        lock (_lock)
        {
            frames = _queued;
            length = _queuedLength;
            commit = _queuedCommit;
            _queued = _spare!;
            _spare = null;
            _queuedLength = 0;
            _queuedCommit = null;
        }
        long durable = 0;
        int errno = 0;
        Exception? error = null;
        try
        {
            durable = DurableIo.AppendAndSync(_handle, frames.AsSpan(0, length), out errno);
        }
        catch (Exception e)
        {
            error = e; // the handle was closed
        }
        byte[] kept = frames.Length > MaxKeptBufferSize ? new byte[InitialBufferSize] : frames;
        lock (_lock)
        {
            _spare = kept;
        }
        var outcome = new CommitOutcome(durable, errno, error);
        commit?.Complete(outcome);
        return outcome;
    }

    /// <summary>What one write and sync achieved.</summary>
    /// <param name="Durable">Bytes from the start of the commit's frames known to be on the device.</param>
    /// <param name="Errno">The error that stopped the write or failed the sync, 0 if none.</param>
    /// <param name="Error">A failure that is not an errno (the handle was closed).</param>
    private readonly record struct CommitOutcome(long Durable, int Errno, Exception? Error)
    {
        /// <summary>Throws, for a caller whose frame ends at <paramref name="end"/>, unless the frame is durable.</summary>
        internal void ThrowIfNotCovered(long end, SafeFileHandle handle)
        {
            if (end <= Durable)
            {
                return;
            }
            if (Error is not null)
            {
                ExceptionDispatchInfo.Throw(Error is ObjectDisposedException ? new ObjectDisposedException(Error.Message, Error) : Error);
            }
            // A fresh exception per caller: one object thrown on many threads would share its stack trace.
            throw IoErrors.ForErrno(Errno != 0 ? Errno : Interop.Errno.EIO, SafeFileHandleInternals.GetPath(handle));
        }
    }

    /// <summary>The outcome of one commit, shared by the callers that wait for it.</summary>
    private sealed class Commit() : TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously)
    {
        internal CommitOutcome Outcome { get; private set; }

        internal void Complete(CommitOutcome outcome)
        {
            Outcome = outcome;
            SetResult();
        }
    }
}
