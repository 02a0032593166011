using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Handles;
using Spindle.Syscalls;

namespace Spindle.Engines.ThreadPool;

/// <summary>
/// One file operation that queues itself on the thread pool, runs the blocking system call there and
/// completes its own <see cref="ValueTask"/>: the work item and the task source are the same pooled
/// object, so a steady stream of operations allocates nothing.
/// </summary>
internal sealed class ThreadPoolOperation : TransferTaskSource, IThreadPoolWorkItem
{
    private enum OperationKind : byte
    {
        Read,
        Write,
        ReadScatter,
        WriteGather,
        Flush,
    }

    private readonly OperationPool<ThreadPoolOperation> _pool; // where the object goes back after GetResult
    private OperationKind _kind;
    private SafeFileHandle? _handle;
    private Memory<byte> _buffer;                              // Read's destination
    private ReadOnlyMemory<byte> _source;                      // Write's bytes
    private IReadOnlyList<Memory<byte>>? _buffers;             // ReadScatter's destinations
    private IReadOnlyList<ReadOnlyMemory<byte>>? _sources;     // WriteGather's bytes
    private long _offset;                                      // negative: the handle has no position
    private long _prefix;                                      // bytes an earlier step (the fast path) already read
    private CancellationToken _cancellationToken;
    private int _claimed;                                      // 1 once a thread runs the call: the pool's, or one waiting for the result
    private int _releases;                                     // 2 while a waiter ran the call and the pool's queue still holds this object

    internal ThreadPoolOperation(OperationPool<ThreadPoolOperation> pool) => _pool = pool;

    /// <summary>
    /// Whether a thread that asks for the result before the pool ran the call may run it itself: a plain pool work item
    /// (not one a readiness wait or a blocking thread releases). Every pool thread may be such a waiter.
    /// </summary>
    internal bool WaiterMayRun { get; set; }

    /// <summary>The descriptor-and-direction key under which <see cref="ReadinessWaiter"/> released this operation, or -1.</summary>
    internal long ReadinessKey { get; set; } = -1;

    internal CancellationToken CancellationToken => _cancellationToken;

    /// <summary>The prepared operation's handle.</summary>
    internal SafeFileHandle Handle => _handle!;

    /// <summary>The engine whose router sent the operation here: the metrics' engine (the mechanism tag says it ran on a pool or blocking thread).</summary>
    internal IoEngine RoutedBy { get; set; } = IoEngine.ThreadPool;

    /// <summary>Whether the operation counts in <see cref="FileRequestsInFlight"/> (a file or block device on a pool thread).</summary>
    internal bool CountedInFlight { get; set; }

    /// <summary>
    /// Whether the operation would wait for its descriptor to become readable (or, with <paramref name="write"/>,
    /// writable): transfers of at least one byte. Empty ones and flushes return at once, as System.IO's do.
    /// </summary>
    internal bool WaitsForReadiness(out bool write)
    {
        write = _kind is OperationKind.Write or OperationKind.WriteGather;
        return _kind switch
        {
            OperationKind.Read => !_buffer.IsEmpty,
            OperationKind.Write => !_source.IsEmpty,
            OperationKind.ReadScatter => AnyBytes(_buffers!),
            OperationKind.WriteGather => AnyBytes(_sources!),
            _ => false,
        };
    }

    private static bool AnyBytes(IReadOnlyList<Memory<byte>> buffers)
    {
        for (int i = 0; i < buffers.Count; i++)
        {
            if (!buffers[i].IsEmpty)
            {
                return true;
            }
        }
        return false;
    }

    private static bool AnyBytes(IReadOnlyList<ReadOnlyMemory<byte>> buffers)
    {
        for (int i = 0; i < buffers.Count; i++)
        {
            if (!buffers[i].IsEmpty)
            {
                return true;
            }
        }
        return false;
    }

    internal void PrepareRead(SafeFileHandle handle, Memory<byte> buffer, long offset, long prefix, CancellationToken cancellationToken)
    {
        Prepare(OperationKind.Read, handle, offset, cancellationToken);
        _buffer = buffer;
        _prefix = prefix;
    }

    internal void PrepareWrite(SafeFileHandle handle, ReadOnlyMemory<byte> buffer, long offset, CancellationToken cancellationToken)
    {
        Prepare(OperationKind.Write, handle, offset, cancellationToken);
        _source = buffer;
    }

    internal void PrepareReadScatter(SafeFileHandle handle, IReadOnlyList<Memory<byte>> buffers, long offset, CancellationToken cancellationToken)
    {
        Prepare(OperationKind.ReadScatter, handle, offset, cancellationToken);
        _buffers = buffers;
    }

    internal void PrepareWriteGather(SafeFileHandle handle, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long offset, CancellationToken cancellationToken)
    {
        Prepare(OperationKind.WriteGather, handle, offset, cancellationToken);
        _sources = buffers;
    }

    internal void PrepareFlush(SafeFileHandle handle, CancellationToken cancellationToken)
        => Prepare(OperationKind.Flush, handle, -1, cancellationToken);

    private void Prepare(OperationKind kind, SafeFileHandle handle, long offset, CancellationToken cancellationToken)
    {
        _kind = kind;
        _handle = handle;
        _offset = offset;
        _prefix = 0;
        _cancellationToken = cancellationToken;
        _claimed = 0;
        _releases = 0;
        WaiterMayRun = false;
    }

    /// <summary>
    /// The result asked for before completion (sync-over-async): when no pool thread has started the call yet, the
    /// waiting thread runs it itself instead of waiting for a pool whose threads may all be waiters like it. The
    /// queue's entry then finds the call taken and only lets the object go back to its pool.
    /// </summary>
    private protected override void WaitForCompletion(short token)
    {
        if (WaiterMayRun)
        {
            Volatile.Write(ref _releases, 2); // before the claim: the queue's entry, once it sees the claim, counts one down
            if (Interlocked.CompareExchange(ref _claimed, 1, 0) == 0)
            {
                RunCall();
                return;
            }
            Volatile.Write(ref _releases, 0);
        }
        WaitUntilCompleted(token);
    }

    /// <summary>Runs on a pool thread.</summary>
    public void Execute()
    {
        if (WaiterMayRun && Interlocked.Exchange(ref _claimed, 1) != 0)
        {
            Release(); // a waiter ran the call (WaitForCompletion)
            return;
        }
        RunCall();
    }

    private void RunCall()
    {
        SafeFileHandle handle = _handle!;
        CancellationToken cancellationToken = _cancellationToken;
        long result = 0;
        Exception? error = null;

        // Like System.IO: a token cancelled while the item waited in the queue wins over the call.
        if (cancellationToken.IsCancellationRequested)
        {
            error = new OperationCanceledException(cancellationToken);
        }
        else
        {
            try
            {
                result = Run(handle, SafeFileHandleInternals.GetPath(handle));
            }
            catch (Exception e)
            {
                error = e;
            }
        }

        long readinessKey = ReadinessKey;
        if (readinessKey >= 0)
        {
            ReadinessKey = -1;
            ReadinessWaiter.Instance.Done(readinessKey);
        }

        if (CountedInFlight)
        {
            CountedInFlight = false;
            FileRequestsInFlight.Leave();
        }

        // Forget every reference before completing: the awaiter may reuse this object at once.
        _handle = null;
        _buffer = default;
        _source = default;
        _buffers = null;
        _sources = null;
        _cancellationToken = default;
        Complete(result, error); // continuations run inline on the pool thread, as System.IO's do
    }

    private long Run(SafeFileHandle handle, string? path)
    {
        switch (_kind)
        {
            case OperationKind.Read:
                int read = PositionalIo.Read(handle, _buffer.Span, _offset, path);
                SpindleMetrics.Operation(RoutedBy, IoDirection.Read, read, RanOn);
                return _prefix + read;
            case OperationKind.Write:
                PositionalIo.Write(handle, _source.Span, _offset, path);
                SpindleMetrics.Operation(RoutedBy, IoDirection.Write, _source.Length, RanOn);
                return 0;
            case OperationKind.ReadScatter:
                long total = PositionalIo.ReadScatter(handle, _buffers!, _offset, path);
                SpindleMetrics.Operation(RoutedBy, IoDirection.Read, total, RanOn);
                return total;
            case OperationKind.WriteGather:
                PositionalIo.WriteGather(handle, _sources!, _offset, path);
                SpindleMetrics.Operation(RoutedBy, IoDirection.Write, 0, RanOn);
                return 0;
            default:
                HandleIo.FlushToDisk(_handle!);
                SpindleMetrics.Operation(RoutedBy, IoDirection.Write, 0, RanOn);
                return 0;
        }
    }

    private protected override void Recycle() => Release();

    // Back to the pool once the result was taken and, when a waiter ran the call, the queue's entry has run too.
    private void Release()
    {
        if (Volatile.Read(ref _releases) == 0 || Interlocked.Decrement(ref _releases) == 0)
        {
            _pool.Return(this);
        }
    }

    // Pool threads, or Spindle's threads for calls that may wait for ever.
    private static IoMechanism RanOn => Thread.CurrentThread.IsThreadPoolThread ? IoMechanism.Pool : IoMechanism.Blocking;
}
