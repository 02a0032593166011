using System.Collections.Concurrent;
using Microsoft.Win32.SafeHandles;
using Spindle.Engines.FastPath;

namespace Spindle.Engines.IoUring;

/// <summary>
/// Spindle's managed io_uring engine. Callers prepare a pooled <see cref="IoUringOperation"/> and
/// queue it; one ring thread (<see cref="RingThread"/>) turns everything queued into SQEs, submits
/// them in one <c>io_uring_enter</c> and delivers the completions. Cached reads complete on the
/// caller's thread through the page-cache fast path first.
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

    private static IoUringEngine? Create()
    {
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
        IoUringOperation operation = Rent();
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

    public override ValueTask WriteAsync(SafeFileHandle handle, ReadOnlyMemory<byte> buffer, long fileOffset, CancellationToken cancellationToken)
    {
        if (buffer.IsEmpty)
        {
            // System.IO makes no system call for an empty write either.
            return default;
        }
        IoUringOperation operation = Rent();
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

    public override ValueTask<long> ReadScatterAsync(SafeFileHandle handle, IReadOnlyList<Memory<byte>> buffers, long fileOffset, CancellationToken cancellationToken)
    {
        IoUringOperation operation = Rent();
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
        short version = operation.Version;
        Start(operation, cancellationToken);
        return new ValueTask<long>(operation, version);
    }

    public override ValueTask WriteGatherAsync(SafeFileHandle handle, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset, CancellationToken cancellationToken)
    {
        IoUringOperation operation = Rent();
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
        IoUringOperation operation = Rent();
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

    private IoUringOperation Rent() => _pool.TryRent() ?? CreateOperation();

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
