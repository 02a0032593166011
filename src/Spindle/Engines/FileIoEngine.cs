using Microsoft.Win32.SafeHandles;

namespace Spindle.Engines;

/// <summary>
/// One way of running asynchronous file operations. Arguments arrive validated; a negative
/// <c>fileOffset</c> means the handle has no position (pipe, socket, character device). Writes
/// complete only when every byte is written. Engines keep the handle referenced and the buffer
/// pinned until the kernel is done with them.
/// </summary>
internal abstract class FileIoEngine
{
    /// <summary>Which engine this is.</summary>
    public abstract IoEngine Kind { get; }

    public abstract ValueTask<int> ReadAsync(SafeFileHandle handle, Memory<byte> buffer, long fileOffset, CancellationToken cancellationToken);

    public abstract ValueTask WriteAsync(SafeFileHandle handle, ReadOnlyMemory<byte> buffer, long fileOffset, CancellationToken cancellationToken);

    public abstract ValueTask<long> ReadScatterAsync(SafeFileHandle handle, IReadOnlyList<Memory<byte>> buffers, long fileOffset, CancellationToken cancellationToken);

    public abstract ValueTask WriteGatherAsync(SafeFileHandle handle, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset, CancellationToken cancellationToken);

    public abstract ValueTask FlushToDiskAsync(SafeFileHandle handle, CancellationToken cancellationToken);
}
