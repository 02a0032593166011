using Microsoft.Win32.SafeHandles;
using Spindle.Engines;
using Spindle.Engines.FastPath;
using Spindle.Syscalls;

namespace Spindle.Engines.ThreadPool;

/// <summary>
/// An asynchronous <c>fdatasync</c> or durable write: the blocking call on a pool thread (a dedicated thread for
/// handles that may block for ever), completing its own <see cref="ValueTask"/>. The work item and the task
/// source are one pooled object, so a steady stream of them allocates nothing.
/// </summary>
internal sealed class DurableOperation : PooledTaskSource<bool>, IThreadPoolWorkItem
{
    private static readonly OperationPool<DurableOperation> s_pool = new(256);

    private SafeFileHandle? _handle;            // the file; null while pooled
    private ReadOnlyMemory<byte> _source;       // a durable write's bytes; empty for a data sync
    private long _offset;                       // a durable write's offset, -1 without a position
    private bool _isWrite;                      // a durable write rather than a data sync
    private CancellationToken _cancellationToken;
    private bool _countedInFlight;              // counted in FileRequestsInFlight (a file or block device)

    /// <summary>Queues an <c>fdatasync</c> of <paramref name="handle"/>; <paramref name="mayBlock"/>: its handle's <see cref="HandleFacts.MayBlockIndefinitely"/>.</summary>
    internal static ValueTask FlushDataAsync(SafeFileHandle handle, bool mayBlock, CancellationToken cancellationToken)
        => Start(handle, mayBlock, default, -1, isWrite: false, cancellationToken);

    /// <summary>Queues a durable write of <paramref name="buffer"/> at <paramref name="offset"/>.</summary>
    internal static ValueTask WriteDurableAsync(SafeFileHandle handle, bool mayBlock, ReadOnlyMemory<byte> buffer, long offset, CancellationToken cancellationToken)
        => Start(handle, mayBlock, buffer, offset, isWrite: true, cancellationToken);

    private static ValueTask Start(SafeFileHandle handle, bool mayBlock, ReadOnlyMemory<byte> buffer, long offset, bool isWrite, CancellationToken cancellationToken)
    {
        DurableOperation operation = s_pool.TryRent() ?? new DurableOperation();
        operation._handle = handle;
        operation._source = buffer;
        operation._offset = offset;
        operation._isWrite = isWrite;
        operation._cancellationToken = cancellationToken;
        short version = operation.Version;
        if (mayBlock)
        {
            WorkerThreads.Blocking.Queue(operation);
        }
        else
        {
            // Counted, so that the router sends overlapping syncs and durable writes to the ring (rows 11 and 12).
            FileRequestsInFlight.Enter();
            operation._countedInFlight = true;
            System.Threading.ThreadPool.UnsafeQueueUserWorkItem(operation, preferLocal: true);
        }
        return new ValueTask(operation, version);
    }

    /// <summary>Runs on a pool thread.</summary>
    public void Execute()
    {
        Exception? error = null;
        // As for every queued operation: a token cancelled while the item waited wins over the call.
        if (_cancellationToken.IsCancellationRequested)
        {
            error = new OperationCanceledException(_cancellationToken);
        }
        else
        {
            try
            {
                if (_isWrite)
                {
                    DurableIo.WriteDurable(_handle!, _source.Span, _offset, Diagnostics.IoMechanism.Pool);
                }
                else
                {
                    DurableIo.FlushData(_handle!);
                }
            }
            catch (Exception e)
            {
                error = e;
            }
        }
        if (_countedInFlight)
        {
            _countedInFlight = false;
            FileRequestsInFlight.Leave();
        }
        // Forget every reference before completing: the awaiter may reuse this object at once.
        _handle = null;
        _source = default;
        _cancellationToken = default;
        Complete(true, error);
    }

    private protected override void Recycle() => s_pool.Return(this);
}
