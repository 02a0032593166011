using Microsoft.Win32.SafeHandles;
using Spindle.Handles;

namespace Spindle.Portable;

/// <summary>
/// <see cref="SpindleRandomAccess"/> in pass-through mode: each call is System.IO's
/// <see cref="System.IO.RandomAccess"/> call, with its validation, exceptions and results; the engine
/// argument is checked and reported (<see cref="PassThrough.Engine"/>), then System.IO runs the operation.
/// </summary>
internal static class PassThroughRandomAccess
{
    internal static ValueTask<int> ReadAsync(SafeFileHandle handle, Memory<byte> buffer, long fileOffset, IoEngine engine, CancellationToken cancellationToken)
    {
        PassThrough.Engine(engine);
        return System.IO.RandomAccess.ReadAsync(handle, buffer, fileOffset, cancellationToken);
    }

    internal static ValueTask<long> ReadAsync(SafeFileHandle handle, IReadOnlyList<Memory<byte>> buffers, long fileOffset, IoEngine engine, CancellationToken cancellationToken)
    {
        PassThrough.Engine(engine);
        return System.IO.RandomAccess.ReadAsync(handle, buffers, fileOffset, cancellationToken);
    }

    internal static ValueTask WriteAsync(SafeFileHandle handle, ReadOnlyMemory<byte> buffer, long fileOffset, IoEngine engine, CancellationToken cancellationToken)
    {
        PassThrough.Engine(engine);
        return System.IO.RandomAccess.WriteAsync(handle, buffer, fileOffset, cancellationToken);
    }

    internal static ValueTask WriteAsync(SafeFileHandle handle, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset, IoEngine engine, CancellationToken cancellationToken)
    {
        PassThrough.Engine(engine);
        return System.IO.RandomAccess.WriteAsync(handle, buffers, fileOffset, cancellationToken);
    }

    /// <summary>System.IO has no asynchronous flush to disk: validate now, then flush on a pool thread, as the thread-pool engine does.</summary>
    internal static ValueTask FlushToDiskAsync(SafeFileHandle handle, IoEngine engine, CancellationToken cancellationToken)
    {
        HandleValidation.ValidateHandle(handle);
        PassThrough.Engine(engine);
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled(cancellationToken);
        }
        return new ValueTask(Task.Run(() => System.IO.RandomAccess.FlushToDisk(handle), CancellationToken.None));
    }
}
