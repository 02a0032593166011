using Microsoft.Win32.SafeHandles;
using Spindle.Engines.FastPath;

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

    /// <summary>A read; cached data may be served on the caller's thread unless the process switched the fast path off.</summary>
    public ValueTask<int> ReadAsync(SafeFileHandle handle, Memory<byte> buffer, long fileOffset, CancellationToken cancellationToken)
        => ReadAsync(handle, buffer, fileOffset, ReadFastPath.Enabled, cancellationToken);

    /// <summary>
    /// A read. With <paramref name="useFastPath"/> an engine may first try a non-blocking read of
    /// cached pages on the caller's thread; the result is the same either way.
    /// </summary>
    public abstract ValueTask<int> ReadAsync(SafeFileHandle handle, Memory<byte> buffer, long fileOffset, bool useFastPath, CancellationToken cancellationToken);

    public abstract ValueTask WriteAsync(SafeFileHandle handle, ReadOnlyMemory<byte> buffer, long fileOffset, CancellationToken cancellationToken);

    public abstract ValueTask<long> ReadScatterAsync(SafeFileHandle handle, IReadOnlyList<Memory<byte>> buffers, long fileOffset, CancellationToken cancellationToken);

    public abstract ValueTask WriteGatherAsync(SafeFileHandle handle, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset, CancellationToken cancellationToken);

    public abstract ValueTask FlushToDiskAsync(SafeFileHandle handle, CancellationToken cancellationToken);
}
