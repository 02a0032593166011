using System.Collections.Concurrent;
using Microsoft.Win32.SafeHandles;
using Spindle.Engines.FastPath;
using Spindle.Engines.ThreadPool;
using Spindle.Interop;

namespace Spindle.Engines.IoUring;

/// <summary>
/// Spindle's managed io_uring engine. Callers prepare a pooled <see cref="RingOperation"/> and
/// queue it; one ring thread (<see cref="RingThread"/>) turns everything queued into SQEs, submits
/// them in one <c>io_uring_enter</c> and delivers the completions. Cached reads complete on the
/// caller's thread through the page-cache fast path first; small writes that are only a copy into
/// the page cache are done inline (see <see cref="WriteFastPath"/>), and every other write through the
/// page cache of a regular file on a pool thread, because io_uring would punt it to an io-wq worker.
/// </summary>
internal sealed partial class IoUringEngine : FileIoEngine
{
    private static IoUringEngine? s_instance;       // the running engine, once a start succeeded
    private static bool s_refused;                  // the kernel (or the switch) refused io_uring: never tried again
    private static long s_retryAt;                  // Environment.TickCount64 before which a failed start is not retried
    private static readonly object s_startGate = new();

    /// <summary>An engine over <paramref name="thread"/>, which it starts (<see cref="RingThread.Start"/>) before first use.</summary>
    internal IoUringEngine(RingThread thread)
    {
        Thread = thread;
        Operations = new RingOperations(this);
    }

    /// <summary>The engine's operations: a pool per kind of request, and the table of slots a CQE's user data names.</summary>
    internal RingOperations Operations { get; }

    /// <summary>
    /// The engine, or null when io_uring cannot be used now (the reason is in <see cref="UnavailableReason"/>):
    /// for good when the kernel refuses it, for a while when the process is out of descriptors or memory.
    /// </summary>
    internal static IoUringEngine? Instance => Volatile.Read(ref s_instance) ?? TryStart();

    /// <summary>The engine when one has started, without trying to start one (null otherwise).</summary>
    internal static IoUringEngine? Running => Volatile.Read(ref s_instance);

    /// <summary>Why io_uring could not be set up (an errno), or null when it could.</summary>
    internal static string? UnavailableReason { get; private set; }

    /// <summary>Whether io_uring was refused for good (not for want of a resource that may come back).</summary>
    internal static bool RefusedForGood => Volatile.Read(ref s_refused);

    internal RingThread Thread { get; }

    public override IoEngine Kind => IoEngine.IoUring;

    /// <summary>The AppContext switch that keeps io_uring off in this process (as if the kernel refused it).</summary>
    internal const string DisableSwitch = SpindleSwitches.DisableIoUringName;

    private static IoUringEngine? TryStart()
    {
        if (Volatile.Read(ref s_refused) || Environment.TickCount64 < Volatile.Read(ref s_retryAt))
        {
            return null;
        }
        lock (s_startGate)
        {
            if (s_instance is not null || s_refused || Environment.TickCount64 < s_retryAt)
            {
                return s_instance;
            }
            if (SpindleSwitches.DisableIoUring)
            {
                UnavailableReason = $"io_uring is switched off ({DisableSwitch})";
                Volatile.Write(ref s_refused, true);
                return null;
            }
            int errno;
            IoUringEngine? engine = null;
            try
            {
                engine = new IoUringEngine(new RingThread());
                if (!engine.Thread.Start(engine, out errno))
                {
                    engine = null;
                }
            }
            catch (OutOfMemoryException)
            {
                // The runtime reports a thread it could not create (no memory, no descriptor) this way.
                errno = Errno.ENOMEM;
                engine = null;
            }
            if (engine is not null)
            {
                UnavailableReason = null;
                Volatile.Write(ref s_instance, engine);
                return engine;
            }
            UnavailableReason = $"io_uring_setup failed: {Errno.Message(errno)} (errno {errno})";
            Diagnostics.SpindleEventSource.Log.IoUringRefused(UnavailableReason, errno);
            if (errno is Errno.EMFILE or Errno.ENFILE or Errno.ENOMEM or Errno.EAGAIN)
            {
                // Resources that come back: the callers fall back now, and a later call tries again.
                Volatile.Write(ref s_retryAt, Environment.TickCount64 + EngineTunables.RingRetryMilliseconds);
            }
            else
            {
                Volatile.Write(ref s_refused, true);
            }
            return null;
        }
    }

    // Each request, with its handle's facts as the caller learned them: the fast path (reads), then the
    // router's decision (Router), then the mechanism it chose, which finishes what the fast path began
    // (its prefix counts in the result).

    public override ValueTask<int> ReadAsync(SafeFileHandle handle, HandleFacts facts, Memory<byte> buffer, long fileOffset, bool useFastPath, CancellationToken cancellationToken)
    {
        int prefix = 0;
        if (useFastPath && ReadFastPath.TryComplete(handle, facts, ref buffer, ref fileOffset, Kind, out prefix, out int completed))
        {
            return new ValueTask<int>(completed);
        }
        Mechanism mechanism = Router.Route(RequestKind.Read, facts, buffer.Length, fileOffset, useFastPath, Kind);
        switch (mechanism)
        {
            case Mechanism.Inline:
                return SyncEngine.Read(handle, buffer, fileOffset, Kind, prefix);
            case Mechanism.Pool:
            case Mechanism.Blocking:
                return ThreadPoolEngine.Instance.Read(handle, facts, mechanism, buffer, fileOffset, prefix, cancellationToken, Kind);
        }
        RingTransfer operation = Operations.Rent(Operations.Transfers, facts.MayBlockIndefinitely);
        try
        {
            operation.PrepareRead(handle, buffer, fileOffset, prefix);
        }
        catch (Exception e)
        {
            return ValueTask.FromException<int>(Operations.Abandon(operation, e));
        }
        return new ValueTask<int>(operation, Start(operation, cancellationToken));
    }

    public override ValueTask WriteAsync(SafeFileHandle handle, HandleFacts facts, ReadOnlyMemory<byte> buffer, long fileOffset, bool useFastPath, CancellationToken cancellationToken)
    {
        Mechanism mechanism = Router.Route(RequestKind.Write, facts, buffer.Length, fileOffset, useFastPath, Kind);
        switch (mechanism)
        {
            case Mechanism.Done:
                return default;
            case Mechanism.FastPath:
                return WriteFastPath.Write(handle, buffer.Span, fileOffset, Kind);
            case Mechanism.Inline:
                return SyncEngine.Write(handle, buffer, fileOffset, Kind);
            case Mechanism.Pool:
            case Mechanism.Blocking:
                return ThreadPoolEngine.Instance.Write(handle, facts, mechanism, buffer, fileOffset, cancellationToken, Kind);
        }
        RingTransfer operation = Operations.Rent(Operations.Transfers, facts.MayBlockIndefinitely);
        try
        {
            operation.PrepareWrite(handle, buffer, fileOffset);
        }
        catch (Exception e)
        {
            return ValueTask.FromException(Operations.Abandon(operation, e));
        }
        return new ValueTask(operation, Start(operation, cancellationToken));
    }

    public override ValueTask<long> ReadScatterAsync(SafeFileHandle handle, HandleFacts facts, IReadOnlyList<Memory<byte>> buffers, long fileOffset, bool useFastPath, CancellationToken cancellationToken)
    {
        if (useFastPath)
        {
            long cached = ReadFastPath.TryReadScatter(handle, facts, buffers, fileOffset, Kind);
            if (cached >= 0)
            {
                return new ValueTask<long>(cached);
            }
        }
        Mechanism mechanism = Router.Route(RequestKind.ReadScatter, facts, Router.TotalLength(buffers), fileOffset, useFastPath, Kind);
        switch (mechanism)
        {
            case Mechanism.Inline:
                return SyncEngine.ReadScatter(handle, buffers, fileOffset, Kind);
            case Mechanism.Pool:
            case Mechanism.Blocking:
                return ThreadPoolEngine.Instance.ReadScatter(handle, facts, mechanism, buffers, fileOffset, cancellationToken, Kind);
        }
        RingTransfer operation = Operations.Rent(Operations.Transfers, facts.MayBlockIndefinitely);
        try
        {
            operation.PrepareReadVectors(handle, buffers, fileOffset);
        }
        catch (Exception e)
        {
            return ValueTask.FromException<long>(Operations.Abandon(operation, e));
        }
        return new ValueTask<long>(operation, Start(operation, cancellationToken));
    }

    public override ValueTask WriteGatherAsync(SafeFileHandle handle, HandleFacts facts, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset, bool useFastPath, CancellationToken cancellationToken)
    {
        Mechanism mechanism = Router.Route(RequestKind.WriteGather, facts, Router.TotalLength(buffers), fileOffset, useFastPath, Kind);
        switch (mechanism)
        {
            case Mechanism.Done:
                return default;
            case Mechanism.FastPath:
                return WriteFastPath.WriteGather(handle, buffers, fileOffset, Kind);
            case Mechanism.Inline:
                return SyncEngine.WriteGather(handle, buffers, fileOffset, Kind);
            case Mechanism.Pool:
            case Mechanism.Blocking:
                return ThreadPoolEngine.Instance.WriteGather(handle, facts, mechanism, buffers, fileOffset, cancellationToken, Kind);
        }
        RingTransfer operation = Operations.Rent(Operations.Transfers, facts.MayBlockIndefinitely);
        try
        {
            operation.PrepareWriteVectors(handle, buffers, fileOffset);
        }
        catch (Exception e)
        {
            return ValueTask.FromException(Operations.Abandon(operation, e));
        }
        return new ValueTask(operation, Start(operation, cancellationToken));
    }

    public override ValueTask FlushToDiskAsync(SafeFileHandle handle, HandleFacts facts, CancellationToken cancellationToken)
    {
        if (Router.Route(RequestKind.Flush, facts, 0, -1, useFastPath: false, Kind) == Mechanism.Inline)
        {
            return SyncEngine.FlushToDisk(handle);
        }
        return SyncOnRing(handle, dataOnly: false, cancellationToken);
    }

    /// <summary>An <c>fsync</c> (or with <paramref name="dataOnly"/> an <c>fdatasync</c>) on the ring.</summary>
    private ValueTask SyncOnRing(SafeFileHandle handle, bool dataOnly, CancellationToken cancellationToken)
    {
        // A sync always finishes, so it never goes in the lane of handles that may wait for ever.
        RingSync operation = Operations.Rent(Operations.Syncs, mayBlock: false);
        try
        {
            operation.Prepare(handle, dataOnly);
        }
        catch (Exception e)
        {
            return ValueTask.FromException(Operations.Abandon(operation, e));
        }
        return new ValueTask(operation, Start(operation, cancellationToken));
    }

    /// <summary>
    /// Hands a prepared operation to the ring and returns the version its <see cref="ValueTask"/> must carry, read
    /// before the submission: once submitted, the operation may complete and be reused before this returns.
    /// </summary>
    internal short Start(RingOperation operation, CancellationToken cancellationToken)
    {
        short version = operation.Version;
        if (!operation.MayBlock)
        {
            FileRequestsInFlight.Enter(); // left in RingOperation.Finish
        }
        operation.Arm(cancellationToken);
        Thread.Submit(operation);
        return version;
    }

    internal void RequestCancel(RingOperation operation, uint generation) => Thread.RequestCancel(operation, generation);

    /// <summary>Slots whose operation is alive (pooled or in use); what a burst beyond the pool leaves behind is freed.</summary>
    internal int LiveOperationSlots => Operations.LiveSlots;
}
