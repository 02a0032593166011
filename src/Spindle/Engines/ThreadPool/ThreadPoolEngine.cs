using Microsoft.Win32.SafeHandles;
using Spindle.Engines.FastPath;

namespace Spindle.Engines.ThreadPool;

/// <summary>
/// What .NET does on Unix: each operation is a blocking system call on a thread-pool thread, queued
/// like System.IO's (to the caller's local queue when the caller is a pool thread, which the runtime
/// moves to its high-priority queue if that caller then blocks waiting for the result, so
/// sync-over-async does not starve). Cached reads complete on the caller's thread through the
/// page-cache fast path first. Where each request runs is the <see cref="Router"/>'s choice; this
/// class also executes the other engines' <see cref="Mechanism.Pool"/> and <see cref="Mechanism.Blocking"/>
/// requests: the latter (pipes, sockets, devices, which may wait for ever) first wait for their
/// descriptor in <see cref="ReadinessWaiter"/> (one thread for all, cancellable), then run on threads of
/// their own (<see cref="WorkerThreads.Blocking"/>), never holding a pool thread that another request needs.
/// </summary>
internal sealed class ThreadPoolEngine : FileIoEngine
{
    internal static readonly ThreadPoolEngine Instance = new();

    private readonly OperationPool<ThreadPoolOperation> _pool = new(1024);

    public override IoEngine Kind => IoEngine.ThreadPool;

    public override ValueTask<int> ReadAsync(SafeFileHandle handle, HandleFacts facts, Memory<byte> buffer, long fileOffset, bool useFastPath, CancellationToken cancellationToken)
    {
        int prefix = 0;
        if (useFastPath && ReadFastPath.TryComplete(handle, facts, ref buffer, ref fileOffset, Kind, out prefix, out int completed))
        {
            return new ValueTask<int>(completed);
        }
        Mechanism mechanism = Route(RequestKind.Read, facts, buffer.Length, fileOffset, useFastPath);
        return mechanism == Mechanism.Inline
            ? SyncEngine.Read(handle, buffer, fileOffset, Kind, prefix)
            : Read(handle, facts, mechanism, buffer, fileOffset, prefix, cancellationToken);
    }

    public override ValueTask WriteAsync(SafeFileHandle handle, HandleFacts facts, ReadOnlyMemory<byte> buffer, long fileOffset, bool useFastPath, CancellationToken cancellationToken)
    {
        Mechanism mechanism = Route(RequestKind.Write, facts, buffer.Length, fileOffset, useFastPath);
        return mechanism switch
        {
            Mechanism.FastPath => WriteFastPath.Write(handle, buffer.Span, fileOffset, Kind),
            Mechanism.Inline => SyncEngine.Write(handle, buffer, fileOffset, Kind),
            _ => Write(handle, facts, mechanism, buffer, fileOffset, cancellationToken),
        };
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
        Mechanism mechanism = Route(RequestKind.ReadScatter, facts, Router.TotalLength(buffers), fileOffset, useFastPath);
        return mechanism == Mechanism.Inline
            ? SyncEngine.ReadScatter(handle, buffers, fileOffset, Kind)
            : ReadScatter(handle, facts, mechanism, buffers, fileOffset, cancellationToken);
    }

    public override ValueTask WriteGatherAsync(SafeFileHandle handle, HandleFacts facts, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset, bool useFastPath, CancellationToken cancellationToken)
    {
        Mechanism mechanism = Route(RequestKind.WriteGather, facts, Router.TotalLength(buffers), fileOffset, useFastPath);
        return mechanism switch
        {
            Mechanism.FastPath => WriteFastPath.WriteGather(handle, buffers, fileOffset, Kind),
            Mechanism.Inline => SyncEngine.WriteGather(handle, buffers, fileOffset, Kind),
            _ => WriteGather(handle, facts, mechanism, buffers, fileOffset, cancellationToken),
        };
    }

    public override ValueTask FlushToDiskAsync(SafeFileHandle handle, HandleFacts facts, CancellationToken cancellationToken)
    {
        ThreadPoolOperation operation = Rent();
        operation.PrepareFlush(handle, cancellationToken);
        return new ValueTask(Queue(operation, facts, Route(RequestKind.Flush, facts, 0, -1, useFastPath: false)), operation.Version);
    }

    // The executors: a request the router sent to a pool thread (Mechanism.Pool) or to a thread of its own (Mechanism.Blocking).

    /// <summary>Runs a read the router of <paramref name="routedBy"/> sent here (its metrics carry that engine); <paramref name="prefix"/> bytes before <paramref name="buffer"/> were read already (the fast path) and count in the result.</summary>
    internal ValueTask<int> Read(SafeFileHandle handle, HandleFacts facts, Mechanism mechanism, Memory<byte> buffer, long fileOffset, int prefix, CancellationToken cancellationToken, IoEngine routedBy = IoEngine.ThreadPool)
    {
        ThreadPoolOperation operation = Rent(routedBy);
        operation.PrepareRead(handle, buffer, fileOffset, prefix, cancellationToken);
        return new ValueTask<int>(Queue(operation, facts, mechanism), operation.Version);
    }

    /// <summary>Runs a write the router sent here.</summary>
    internal ValueTask Write(SafeFileHandle handle, HandleFacts facts, Mechanism mechanism, ReadOnlyMemory<byte> buffer, long fileOffset, CancellationToken cancellationToken, IoEngine routedBy = IoEngine.ThreadPool)
    {
        ThreadPoolOperation operation = Rent(routedBy);
        operation.PrepareWrite(handle, buffer, fileOffset, cancellationToken);
        return new ValueTask(Queue(operation, facts, mechanism), operation.Version);
    }

    /// <summary>Runs a scatter read the router sent here.</summary>
    internal ValueTask<long> ReadScatter(SafeFileHandle handle, HandleFacts facts, Mechanism mechanism, IReadOnlyList<Memory<byte>> buffers, long fileOffset, CancellationToken cancellationToken, IoEngine routedBy = IoEngine.ThreadPool)
    {
        ThreadPoolOperation operation = Rent(routedBy);
        operation.PrepareReadScatter(handle, buffers, fileOffset, cancellationToken);
        return new ValueTask<long>(Queue(operation, facts, mechanism), operation.Version);
    }

    /// <summary>Runs a gather write the router sent here.</summary>
    internal ValueTask WriteGather(SafeFileHandle handle, HandleFacts facts, Mechanism mechanism, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset, CancellationToken cancellationToken, IoEngine routedBy = IoEngine.ThreadPool)
    {
        ThreadPoolOperation operation = Rent(routedBy);
        operation.PrepareWriteGather(handle, buffers, fileOffset, cancellationToken);
        return new ValueTask(Queue(operation, facts, mechanism), operation.Version);
    }

    private Mechanism Route(RequestKind kind, HandleFacts facts, long length, long fileOffset, bool useFastPath)
        => Router.Route(kind, facts, length, fileOffset, useFastPath, Kind);

    private ThreadPoolOperation Rent(IoEngine routedBy = IoEngine.ThreadPool)
    {
        ThreadPoolOperation operation = _pool.TryRent() ?? new ThreadPoolOperation(_pool);
        operation.RoutedBy = routedBy;
        return operation;
    }

    private static ThreadPoolOperation Queue(ThreadPoolOperation operation, HandleFacts facts, Mechanism mechanism)
    {
        if (mechanism == Mechanism.Blocking)
        {
            // An idle pipe or socket waits in poll(2), not on a thread of its own; O_NONBLOCK ones fail at once instead.
            if (!facts.NonBlocking && !facts.FailsAtOnce && operation.WaitsForReadiness(out bool write))
            {
                ReadinessWaiter.Instance.Wait(operation, operation.Handle, write, operation.CancellationToken);
            }
            else
            {
                WorkerThreads.Blocking.Queue(operation);
            }
        }
        else
        {
            // Counted where it tells the router something: a request on a file system that only pool threads serve
            // well makes no other request's ring submission pay, and the count's two atomic operations per request
            // are a measurable part of a cached read's cost.
            if (!facts.RefusesNonBlockingIo)
            {
                FileRequestsInFlight.Enter();
                operation.CountedInFlight = true;
            }
            // preferLocal as System.IO: from a pool thread that then blocks on the result, the runtime
            // hands the item to the next free thread first (global items would run before it).
            operation.WaiterMayRun = true;
            System.Threading.ThreadPool.UnsafeQueueUserWorkItem(operation, preferLocal: true);
        }
        return operation;
    }
}
