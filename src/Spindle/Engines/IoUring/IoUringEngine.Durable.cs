using Microsoft.Win32.SafeHandles;
using Spindle.Engines.ThreadPool;
using Spindle.Syscalls;
using Spindle.Engines.FastPath;

namespace Spindle.Engines.IoUring;

/// <summary>
/// <c>fdatasync</c> and durable writes on the ring (router rows 11 and 12): no pool thread waits for the device. A durable
/// write is one <c>IORING_OP_WRITE</c> with <c>RWF_DSYNC</c>; the first one the kernel refuses (<c>EINVAL</c>,
/// <c>EOPNOTSUPP</c> before any byte) switches the engine to a write linked to an <c>fdatasync</c> in one submission.
/// </summary>
internal sealed partial class IoUringEngine
{
    private volatile bool _dataSyncWritesRefused; // the kernel refused RWF_DSYNC on the ring once: linked pairs from then on

    /// <summary>
    /// Whether durable writes go as a write linked to an <c>fdatasync</c> rather than one <c>RWF_DSYNC</c> write: set
    /// when the kernel refused the flag once; tests set it on a private engine to run the linked path.
    /// </summary>
    internal bool DataSyncWritesRefused
    {
        get => _dataSyncWritesRefused;
        set => _dataSyncWritesRefused = value;
    }

    internal void RefuseDataSyncWrites() => _dataSyncWritesRefused = true;

    public override ValueTask FlushDataToDiskAsync(SafeFileHandle handle, HandleFacts facts, CancellationToken cancellationToken)
    {
        switch (Router.RouteDurable(RequestKind.DataSync, facts, 0, -1, !FileRequestsInFlight.None))
        {
            case Mechanism.Pool:
                return DurableOperation.FlushDataAsync(handle, facts.MayBlockIndefinitely, cancellationToken);
            case Mechanism.Inline:
                return SyncEngine.FlushData(handle);
        }
        return SyncOnRing(handle, dataOnly: true, cancellationToken);
    }

    public override ValueTask WriteDurableAsync(SafeFileHandle handle, HandleFacts facts, ReadOnlyMemory<byte> buffer, long fileOffset, CancellationToken cancellationToken)
    {
        switch (Router.RouteDurable(RequestKind.WriteDurable, facts, buffer.Length, fileOffset, !FileRequestsInFlight.None))
        {
            case Mechanism.Done:
                return default;
            case Mechanism.Inline:
                try
                {
                    DurableIo.WriteDurable(handle, buffer.Span, fileOffset);
                    return default;
                }
                catch (Exception e)
                {
                    return ValueTask.FromException(e);
                }
            case Mechanism.Pool:
                return DurableOperation.WriteDurableAsync(handle, facts.MayBlockIndefinitely, buffer, fileOffset, cancellationToken);
        }
        return WriteDurableOnRingAsync(handle, buffer, fileOffset, facts.MayBlockIndefinitely, cancellationToken);
    }

    /// <summary>The ring's durable write, whatever the router would choose (the executor; tests call it directly).</summary>
    internal ValueTask WriteDurableOnRingAsync(SafeFileHandle handle, ReadOnlyMemory<byte> buffer, long fileOffset, bool mayBlock, CancellationToken cancellationToken)
    {
        RingDurableWrite operation = Operations.Rent(Operations.DurableWrites, mayBlock);
        try
        {
            operation.Prepare(handle, buffer, fileOffset, dataSyncFlag: !_dataSyncWritesRefused);
        }
        catch (Exception e)
        {
            return ValueTask.FromException(Operations.Abandon(operation, e));
        }
        return new ValueTask(operation, Start(operation, cancellationToken));
    }
}
