using System.Collections.Concurrent;
using Microsoft.Win32.SafeHandles;
using Spindle.Engines.FastPath;
using Spindle.Engines.ThreadPool;

namespace Spindle.Engines.IoUring;

/// <summary>
/// Spindle's managed io_uring engine. Callers prepare a pooled <see cref="IoUringOperation"/> and
/// queue it; one ring thread (<see cref="RingThread"/>) turns everything queued into SQEs, submits
/// them in one <c>io_uring_enter</c> and delivers the completions. Cached reads complete on the
/// caller's thread through the page-cache fast path first; writes that are only a copy into the
/// page cache are done inline (small) or on a pool thread (large), because io_uring would punt
/// them to an io-wq worker (see <see cref="WriteFastPath"/>).
/// </summary>
internal sealed class IoUringEngine : FileIoEngine
{
    private static readonly Lazy<IoUringEngine?> s_instance = new(Create, LazyThreadSafetyMode.ExecutionAndPublication);

    private readonly OperationPool<IoUringOperation> _pool = new(4096);
    private readonly Lock _tableLock = new();
    private IoUringOperation[] _operations = new IoUringOperation[64]; // slot id → operation, replaced when it grows
    private int _operationCount;                                        // slots in use

    private IoUringEngine(RingThread thread) => Thread = thread;

    /// <summary>The engine, or null when the kernel refuses io_uring (the reason is in <see cref="UnavailableReason"/>).</summary>
    internal static IoUringEngine? Instance => s_instance.Value;

    /// <summary>Why io_uring could not be set up (an errno), or null when it could.</summary>
    internal static string? UnavailableReason { get; private set; }

    internal RingThread Thread { get; }

    public override IoEngine Kind => IoEngine.IoUring;

    /// <summary>The AppContext switch that keeps io_uring off in this process (as if the kernel refused it).</summary>
    internal const string DisableSwitch = "Spindle.DisableIoUring";

    /// <summary>A second engine with a ring and threads of its own (tests that use the ring thread's seams), or null.</summary>
    /// <param name="inline">Whether its ring thread runs continuations itself; null: as the process-wide switch says.</param>
    internal static IoUringEngine? CreatePrivate(bool? inline = null)
    {
        var engine = new IoUringEngine(new RingThread(inline));
        return engine.Thread.Start(engine, out _) ? engine : null;
    }

    private static IoUringEngine? Create()
    {
        if (AppContext.TryGetSwitch(DisableSwitch, out bool disabled) && disabled)
        {
            UnavailableReason = $"io_uring is switched off ({DisableSwitch})";
            return null;
        }
        var engine = new IoUringEngine(new RingThread());
        if (!engine.Thread.Start(engine, out string? reason))
        {
            UnavailableReason = reason;
            return null;
        }
        return engine;
    }

    public override ValueTask<int> ReadAsync(SafeFileHandle handle, Memory<byte> buffer, long fileOffset, bool useFastPath, CancellationToken cancellationToken)
    {
        int prefix = 0;
        if (useFastPath && ReadFastPath.TryComplete(handle, ref buffer, ref fileOffset, Kind, out prefix, out int completed))
        {
            return new ValueTask<int>(completed);
        }
        if (buffer.IsEmpty)
        {
            // A zero-byte read never blocks, but io_uring would wait on an empty pipe for data it then
            // does not take; System.IO's read(2) of zero bytes returns (or fails) at once, so do that.
            return SyncEngine.Read(handle, buffer, fileOffset);
        }
        IoUringOperation operation = Rent(HandleFacts.MayBlock(handle));
        try
        {
            operation.PrepareRead(handle, buffer, fileOffset, prefix);
        }
        catch (Exception e)
        {
            Abandon(operation);
            return ValueTask.FromException<int>(e);
        }
        short version = operation.Version;
        Start(operation, cancellationToken);
        return new ValueTask<int>(operation, version);
    }

    public override ValueTask WriteAsync(SafeFileHandle handle, ReadOnlyMemory<byte> buffer, long fileOffset, bool useFastPath, CancellationToken cancellationToken)
    {
        if (useFastPath && WriteFastPath.Applies(handle, buffer.Length, fileOffset))
        {
            return WriteFastPath.Write(handle, buffer.Span, fileOffset, Kind);
        }
        if (useFastPath && WriteFastPath.IsPageCacheCopy(handle, fileOffset))
        {
            // A larger buffered write would reach an io-wq worker anyway; one pool thread is cheaper.
            return ThreadPoolEngine.Instance.WriteAsync(handle, buffer, fileOffset, useFastPath: false, cancellationToken);
        }
        if (buffer.IsEmpty)
        {
            // System.IO makes no system call for an empty write either.
            return default;
        }
        IoUringOperation operation = Rent(HandleFacts.MayBlock(handle));
        try
        {
            operation.PrepareWrite(handle, buffer, fileOffset);
        }
        catch (Exception e)
        {
            Abandon(operation);
            return ValueTask.FromException(e);
        }
        short version = operation.Version;
        Start(operation, cancellationToken);
        return new ValueTask(operation, version);
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
        IoUringOperation operation = Rent(HandleFacts.MayBlock(handle));
        try
        {
            operation.PrepareReadVectors(handle, buffers, fileOffset);
        }
        catch (Exception e)
        {
            Abandon(operation);
            return ValueTask.FromException<long>(e);
        }
        if (operation.IsTriviallyComplete())
        {
            Abandon(operation);
            return new ValueTask<long>(0);
        }
        if (operation.IsZeroLength())
        {
            // Only empty buffers: like a zero-byte read, done at once (see ReadAsync).
            Abandon(operation);
            return SyncEngine.ReadScatter(handle, buffers, fileOffset);
        }
        short version = operation.Version;
        Start(operation, cancellationToken);
        return new ValueTask<long>(operation, version);
    }

    public override ValueTask WriteGatherAsync(SafeFileHandle handle, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset, bool useFastPath, CancellationToken cancellationToken)
    {
        if (useFastPath && WriteFastPath.Applies(handle, buffers, fileOffset))
        {
            return WriteFastPath.WriteGather(handle, buffers, fileOffset, Kind);
        }
        if (useFastPath && WriteFastPath.IsPageCacheCopy(handle, fileOffset))
        {
            // As in WriteAsync: io_uring would hand this write to an io-wq worker.
            return ThreadPoolEngine.Instance.WriteGatherAsync(handle, buffers, fileOffset, useFastPath: false, cancellationToken);
        }
        IoUringOperation operation = Rent(HandleFacts.MayBlock(handle));
        try
        {
            operation.PrepareWriteVectors(handle, buffers, fileOffset);
        }
        catch (Exception e)
        {
            Abandon(operation);
            return ValueTask.FromException(e);
        }
        if (operation.IsTriviallyComplete())
        {
            Abandon(operation);
            return default;
        }
        short version = operation.Version;
        Start(operation, cancellationToken);
        return new ValueTask(operation, version);
    }

    public override ValueTask FlushToDiskAsync(SafeFileHandle handle, CancellationToken cancellationToken)
    {
        IoUringOperation operation = Rent(mayBlock: false); // fsync always finishes
        try
        {
            operation.PrepareFsync(handle);
        }
        catch (Exception e)
        {
            Abandon(operation);
            return ValueTask.FromException(e);
        }
        short version = operation.Version;
        Start(operation, cancellationToken);
        return new ValueTask(operation, version);
    }

    private void Start(IoUringOperation operation, CancellationToken cancellationToken)
    {
        operation.Arm(cancellationToken);
        Thread.Submit(operation);
    }

    /// <summary>The operation in a slot (ring thread, for a CQE's user data).</summary>
    internal IoUringOperation? Lookup(int id)
    {
        IoUringOperation[] table = Volatile.Read(ref _operations);
        return (uint)id < (uint)table.Length ? table[id] : null;
    }

    internal void RequestCancel(IoUringOperation operation, uint generation) => Thread.RequestCancel(operation, generation);

    internal void Return(IoUringOperation operation) => _pool.Return(operation);

    /// <summary>An operation that never reached the ring: let go of what it holds and pool it.</summary>
    private void Abandon(IoUringOperation operation)
    {
        operation.ReleaseResources();
        _pool.Return(operation);
    }

    private IoUringOperation Rent(bool mayBlock)
    {
        IoUringOperation operation = _pool.TryRent() ?? CreateOperation();
        operation.MayBlock = mayBlock;
        return operation;
    }

    private IoUringOperation CreateOperation()
    {
        lock (_tableLock)
        {
            int id = _operationCount++;
            IoUringOperation[] table = _operations;
            if (id == table.Length)
            {
                Array.Resize(ref table, table.Length * 2);
            }
            var operation = new IoUringOperation(this, id);
            table[id] = operation;
            // Publish the (possibly new) table before the operation can reach the ring thread.
            Volatile.Write(ref _operations, table);
            return operation;
        }
    }
}
