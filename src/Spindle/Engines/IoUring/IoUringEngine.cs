using Microsoft.Win32.SafeHandles;
using Spindle.Engines.FastPath;
using Spindle.Handles;
using Spindle.Interop;
using Spindle.Syscalls;

namespace Spindle.Engines.IoUring;

/// <summary>
/// Spindle's managed io_uring engine: callers prepare a pooled <see cref="RingOperation"/> and queue it; the ring
/// (<see cref="RingThread"/>) submits what is queued together and delivers the completions. Where a request runs
/// (cache, inline, pool, ring) is the router's decision.
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

    /// <summary>The engine, or null when io_uring cannot be used now (<see cref="UnavailableReason"/>): for good, or for a while when out of descriptors or memory.</summary>
    internal static IoUringEngine? Instance => Volatile.Read(ref s_instance) ?? TryStart();

    /// <summary>The engine when one has started, without trying to start one (null otherwise).</summary>
    internal static IoUringEngine? Running => Volatile.Read(ref s_instance);

    /// <summary>Why io_uring could not be set up (an errno), or null when it could.</summary>
    internal static string? UnavailableReason { get; private set; }

    /// <summary>Whether io_uring was refused for good (not for want of a resource that may come back).</summary>
    internal static bool RefusedForGood => Volatile.Read(ref s_refused);

    internal RingThread Thread { get; }

    public override IoEngine Kind => IoEngine.IoUring;

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
                UnavailableReason = $"io_uring is switched off ({SpindleSwitches.DisableIoUringName})";
                Volatile.Write(ref s_refused, true);
                return null;
            }
            int errno;
            try
            {
                var engine = new IoUringEngine(new RingThread());
                if (engine.Thread.Start(engine, out errno))
                {
                    UnavailableReason = null;
                    Volatile.Write(ref s_instance, engine);
                    return engine;
                }
            }
            catch (OutOfMemoryException)
            {
                // The runtime reports a thread it could not create (no memory, no descriptor) this way.
                errno = Errno.ENOMEM;
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

    /// <summary>The ring's executor: a read or write (<see cref="RingTransfer"/>), or a sync or durable write (<see cref="RingSync"/>).</summary>
    internal override RequestTask RunOnRing(in FileRequest request)
    {
        bool mayBlock = request.Facts.MayBlockIndefinitely;
        return request.Kind switch
        {
            // A sync always finishes, so it never goes in the lane of handles that may wait for ever.
            RequestKind.Flush or RequestKind.DataSync => Start(Operations.Rent(Operations.Syncs, mayBlock: false), request),
            RequestKind.WriteDurable => Start(Operations.Rent(Operations.Syncs, mayBlock), request),
            _ => Start(Operations.Rent(Operations.Transfers, mayBlock), request),
        };
    }

    /// <summary>Prepares a rented operation for <paramref name="request"/> and starts it; one that cannot be prepared goes back to the pool and fails the task.</summary>
    private RequestTask Start<TOperation>(TOperation operation, in FileRequest request)
        where TOperation : RingOperation, IRingFileRequest
    {
        try
        {
            operation.Prepare(request);
        }
        catch (Exception e)
        {
            return RequestTask.Failed(Operations.Abandon(operation, e));
        }
        return RequestTask.Pending(operation, Start(operation, request.CancellationToken));
    }

    /// <summary>Hands a prepared operation to the ring; returns its task's version, read first (once submitted it may complete and be reused).</summary>
    internal short Start(RingOperation operation, CancellationToken cancellationToken)
    {
        short version = operation.Version;
        operation.Arm(cancellationToken);
        Thread.Submit(operation);
        return version;
    }

    /// <summary>Whether durable writes go as a write linked to an <c>fdatasync</c>: the kernel refused <c>RWF_DSYNC</c> once (tests set it on a private engine).</summary>
    internal bool DataSyncWritesRefused
    {
        get => Volatile.Read(ref field);
        set => Volatile.Write(ref field, value);
    }

    internal override ValueTask<OpenedHandle> OpenAsync(OpenRequest request, CancellationToken cancellationToken)
        => cancellationToken.IsCancellationRequested
            ? ValueTask.FromCanceled<OpenedHandle>(cancellationToken)
            : RingOpen.OpenAsync(this, request, tryCached: Router.RouteOpen(request.Flags) == Mechanism.FastPath, cancellationToken);

    internal override ValueTask CloseAsync(SafeFileHandle handle, bool mayWait)
    {
        if (Router.RouteClose(mayWait) != Mechanism.Ring || !SafeFileHandleInternals.TryTakeDescriptor(handle, out int fd))
        {
            return base.CloseAsync(handle, mayWait);
        }
        RingOpenAt operation = Operations.Rent(Operations.Opens, mayBlock: false);
        operation.PrepareClose(fd);
        return new ValueTask(operation, Start(operation, CancellationToken.None));
    }

    /// <summary><c>openat</c> on the ring: the descriptor, or the negated errno; cancelled only once no descriptor of it is left.</summary>
    internal ValueTask<int> OpenAtAsync(string fullPath, int flags, int permissions, CancellationToken cancellationToken)
    {
        // An open may wait for ever (a FIFO without its other end): it goes in the lane of such operations.
        RingOpenAt operation = Operations.Rent(Operations.Opens, mayBlock: true);
        try
        {
            operation.Prepare(fullPath, flags, permissions);
        }
        catch (Exception e)
        {
            return ValueTask.FromException<int>(Operations.Abandon(operation, e));
        }
        return new ValueTask<int>(operation, Start(operation, cancellationToken));
    }
}
