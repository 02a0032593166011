using Microsoft.Win32.SafeHandles;
using Spindle.Engines.FastPath;

namespace Spindle.Engines.ThreadPool;

/// <summary>
/// What .NET does on Unix: each operation is a blocking system call on a thread-pool thread, queued
/// like System.IO's (to the caller's local queue when the caller is a pool thread, which the runtime
/// moves to its high-priority queue if that caller then blocks waiting for the result, so
/// sync-over-async does not starve). Cached reads complete on the caller's thread through the
/// page-cache fast path first. Operations on pipes, sockets and character devices, which may wait for
/// ever, first wait for their descriptor in <see cref="ReadinessWaiter"/> (one thread for all, cancellable),
/// then run on threads of their own (<see cref="WorkerThreads.Blocking"/>), never holding a pool thread
/// that another operation needs.
/// </summary>
internal sealed class ThreadPoolEngine : FileIoEngine
{
    internal static readonly ThreadPoolEngine Instance = new();

    private readonly OperationPool<ThreadPoolOperation> _pool = new(1024);

    public override IoEngine Kind => IoEngine.ThreadPool;

    public override ValueTask<int> ReadAsync(SafeFileHandle handle, Memory<byte> buffer, long fileOffset, bool useFastPath, CancellationToken cancellationToken)
    {
        int prefix = 0;
        if (useFastPath && ReadFastPath.TryComplete(handle, ref buffer, ref fileOffset, Kind, out prefix, out int completed))
        {
            return new ValueTask<int>(completed);
        }

        return Read(handle, buffer, fileOffset, prefix, cancellationToken);
    }

    /// <summary>The read on a pool thread; <paramref name="prefix"/> bytes before <paramref name="buffer"/> were read already (the fast path) and count in the result.</summary>
    internal ValueTask<int> Read(SafeFileHandle handle, Memory<byte> buffer, long fileOffset, int prefix, CancellationToken cancellationToken)
    {
        ThreadPoolOperation operation = Rent();
        operation.PrepareRead(handle, buffer, fileOffset, prefix, cancellationToken);
        return new ValueTask<int>(Queue(operation, handle), operation.Version);
    }

    public override ValueTask WriteAsync(SafeFileHandle handle, ReadOnlyMemory<byte> buffer, long fileOffset, bool useFastPath, CancellationToken cancellationToken)
    {
        if (useFastPath && WriteFastPath.Applies(handle, buffer.Length, fileOffset))
        {
            return WriteFastPath.Write(handle, buffer.Span, fileOffset, Kind);
        }
        ThreadPoolOperation operation = Rent();
        operation.PrepareWrite(handle, buffer, fileOffset, cancellationToken);
        return new ValueTask(Queue(operation, handle), operation.Version);
    }

    public override ValueTask<long> ReadScatterAsync(SafeFileHandle handle, IReadOnlyList<Memory<byte>> buffers, long fileOffset, bool useFastPath, CancellationToken cancellationToken)
    {
        if (useFastPath)
        {
            long cached = ReadFastPath.TryReadScatter(handle, buffers, fileOffset, Kind);
            if (cached >= 0)
            {
                return new ValueTask<long>(cached);
            }
        }
        ThreadPoolOperation operation = Rent();
        operation.PrepareReadScatter(handle, buffers, fileOffset, cancellationToken);
        return new ValueTask<long>(Queue(operation, handle), operation.Version);
    }

    public override ValueTask WriteGatherAsync(SafeFileHandle handle, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset, bool useFastPath, CancellationToken cancellationToken)
    {
        if (useFastPath && WriteFastPath.Applies(handle, buffers, fileOffset))
        {
            return WriteFastPath.WriteGather(handle, buffers, fileOffset, Kind);
        }
        ThreadPoolOperation operation = Rent();
        operation.PrepareWriteGather(handle, buffers, fileOffset, cancellationToken);
        return new ValueTask(Queue(operation, handle), operation.Version);
    }

    public override ValueTask FlushToDiskAsync(SafeFileHandle handle, CancellationToken cancellationToken)
    {
        ThreadPoolOperation operation = Rent();
        operation.PrepareFlush(handle, cancellationToken);
        return new ValueTask(Queue(operation, handle), operation.Version);
    }

    private ThreadPoolOperation Rent() => _pool.TryRent() ?? new ThreadPoolOperation(_pool);

    private static ThreadPoolOperation Queue(ThreadPoolOperation operation, SafeFileHandle handle)
    {
        HandleFacts facts = HandleFacts.Of(handle);
        if (facts.MayBlockIndefinitely)
        {
            // An idle pipe or socket waits in poll(2), not on a thread of its own; O_NONBLOCK ones fail at once instead.
            if (!facts.NonBlocking && !facts.FailsAtOnce && operation.WaitsForReadiness(out bool write))
            {
                ReadinessWaiter.Instance.Wait(operation, handle, write, operation.CancellationToken);
            }
            else
            {
                WorkerThreads.Blocking.Queue(operation);
            }
        }
        else
        {
            FileRequestsInFlight.Enter();
            operation.CountedInFlight = true;
            // preferLocal as System.IO: from a pool thread that then blocks on the result, the runtime
            // hands the item to the next free thread first (global items would run before it).
            System.Threading.ThreadPool.UnsafeQueueUserWorkItem(operation, preferLocal: true);
        }
        return operation;
    }
}
