using Microsoft.Win32.SafeHandles;
using Spindle.Engines.FastPath;
using Spindle.Engines.ThreadPool;
using Spindle.Syscalls;

namespace Spindle.Engines;

internal abstract partial class FileIoEngine
{
    /// <summary><c>fdatasync</c> of a raw handle.</summary>
    public ValueTask FlushDataToDiskAsync(SafeFileHandle handle, CancellationToken cancellationToken)
        => FlushDataToDiskAsync(handle, HandleFacts.Of(handle), cancellationToken);

    /// <summary>
    /// <c>fdatasync</c>. Arguments arrive validated. The Sync engine syncs on the calling thread; the others, unless
    /// they have a better way, on a pool thread (a thread of its own for handles that may block for ever).
    /// </summary>
    public virtual ValueTask FlushDataToDiskAsync(SafeFileHandle handle, HandleFacts facts, CancellationToken cancellationToken)
    {
        return Kind == IoEngine.Sync
            ? SyncEngine.FlushData(handle)
            : DurableOperation.FlushDataAsync(handle, facts.MayBlockIndefinitely, cancellationToken);
    }

    /// <summary>A durable write to a raw handle.</summary>
    public ValueTask WriteDurableAsync(SafeFileHandle handle, ReadOnlyMemory<byte> buffer, long fileOffset, CancellationToken cancellationToken)
        => WriteDurableAsync(handle, HandleFacts.Of(handle), buffer, fileOffset, cancellationToken);

    /// <summary>
    /// A write of every byte that completes only when they are on the device (<see cref="DurableIo.WriteDurable(SafeFileHandle, ReadOnlySpan{byte}, long, Diagnostics.IoMechanism)"/>).
    /// Arguments arrive validated and the buffer is not empty; where it runs, as for <see cref="FlushDataToDiskAsync(SafeFileHandle, HandleFacts, CancellationToken)"/>.
    /// </summary>
    public virtual ValueTask WriteDurableAsync(SafeFileHandle handle, HandleFacts facts, ReadOnlyMemory<byte> buffer, long fileOffset, CancellationToken cancellationToken)
    {
        if (Kind != IoEngine.Sync)
        {
            return DurableOperation.WriteDurableAsync(handle, facts.MayBlockIndefinitely, buffer, fileOffset, cancellationToken);
        }
        try
        {
            DurableIo.WriteDurable(handle, buffer.Span, fileOffset);
            return default;
        }
        catch (Exception e)
        {
            return ValueTask.FromException(e);
        }
    }
}
