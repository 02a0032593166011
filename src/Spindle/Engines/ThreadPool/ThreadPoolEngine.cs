using Microsoft.Win32.SafeHandles;
using Spindle.Engines.FastPath;

namespace Spindle.Engines.ThreadPool;

/// <summary>
/// What .NET does on Unix: each operation is a blocking system call on a thread-pool thread. Cached
/// reads complete on the caller's thread through the page-cache fast path first.
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

        ThreadPoolOperation operation = Rent();
        operation.PrepareRead(handle, buffer, fileOffset, prefix, cancellationToken);
        return new ValueTask<int>(Queue(operation), operation.Version);
    }

    public override ValueTask WriteAsync(SafeFileHandle handle, ReadOnlyMemory<byte> buffer, long fileOffset, CancellationToken cancellationToken)
    {
        ThreadPoolOperation operation = Rent();
        operation.PrepareWrite(handle, buffer, fileOffset, cancellationToken);
        return new ValueTask(Queue(operation), operation.Version);
    }

    public override ValueTask<long> ReadScatterAsync(SafeFileHandle handle, IReadOnlyList<Memory<byte>> buffers, long fileOffset, CancellationToken cancellationToken)
    {
        ThreadPoolOperation operation = Rent();
        operation.PrepareReadScatter(handle, buffers, fileOffset, cancellationToken);
        return new ValueTask<long>(Queue(operation), operation.Version);
    }

    public override ValueTask WriteGatherAsync(SafeFileHandle handle, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset, CancellationToken cancellationToken)
    {
        ThreadPoolOperation operation = Rent();
        operation.PrepareWriteGather(handle, buffers, fileOffset, cancellationToken);
        return new ValueTask(Queue(operation), operation.Version);
    }

    public override ValueTask FlushToDiskAsync(SafeFileHandle handle, CancellationToken cancellationToken)
    {
        ThreadPoolOperation operation = Rent();
        operation.PrepareFlush(handle, cancellationToken);
        return new ValueTask(Queue(operation), operation.Version);
    }

    private ThreadPoolOperation Rent() => _pool.TryRent() ?? new ThreadPoolOperation(_pool);

    private static ThreadPoolOperation Queue(ThreadPoolOperation operation)
    {
        System.Threading.ThreadPool.UnsafeQueueUserWorkItem(operation, preferLocal: false);
        return operation;
    }
}
