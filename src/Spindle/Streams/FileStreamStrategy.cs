using Microsoft.Win32.SafeHandles;

namespace Spindle.Streams;

/// <summary>
/// One layer of a <see cref="SpindleFileStream"/>: the OS layer that owns the handle and the position,
/// the buffering layer stacked on it, or the layer that routes calls back through a derived type's
/// overrides. <see cref="SpindleFileStream"/> validates arguments before calling in.
/// </summary>
internal abstract class FileStreamStrategy : Stream
{
    /// <summary>Whether the handle was opened for asynchronous I/O.</summary>
    internal abstract bool IsAsync { get; }

    /// <summary>The path the file was opened with, or <c>[Unknown]</c>.</summary>
    internal abstract string Name { get; }

    /// <summary>The handle, with buffered data flushed and the OS offset set to <see cref="Stream.Position"/>.</summary>
    internal abstract SafeFileHandle SafeFileHandle { get; }

    /// <summary>Whether the handle is closed.</summary>
    internal abstract bool IsClosed { get; }

    /// <summary>The engine asynchronous operations run on.</summary>
    internal abstract IoEngine Engine { get; }

    /// <summary>Whether this layer sends calls back through a derived type's overrides.</summary>
    internal virtual bool IsDerived => false;

    /// <summary>Whether the stream needs its finalizer (to flush buffered data); false lets it skip finalization.</summary>
    internal virtual bool RequiresFinalizer => false;

    /// <summary>Flushes buffered data and, when asked, the OS caches to the device.</summary>
    internal abstract void Flush(bool flushToDisk);

    internal abstract void Lock(long position, long length);

    internal abstract void Unlock(long position, long length);

    /// <summary>Called by <see cref="SpindleFileStream"/>'s <c>Dispose(bool)</c> and finalizer.</summary>
    internal void DisposeInternal(bool disposing) => Dispose(disposing);

    public sealed override void Flush() => Flush(flushToDisk: false);

    // The array and APM forms of the asynchronous calls, for every layer: each implements the memory forms.

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
        => ReadAsync(new Memory<byte>(buffer, offset, count), cancellationToken).AsTask();

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
        => WriteAsync(new ReadOnlyMemory<byte>(buffer, offset, count), cancellationToken).AsTask();

    public override IAsyncResult BeginRead(byte[] buffer, int offset, int count, AsyncCallback? callback, object? state)
        => TaskToAsyncResult.Begin(ReadAsync(buffer, offset, count, CancellationToken.None), callback, state);

    public override int EndRead(IAsyncResult asyncResult) => TaskToAsyncResult.End<int>(asyncResult);

    public override IAsyncResult BeginWrite(byte[] buffer, int offset, int count, AsyncCallback? callback, object? state)
        => TaskToAsyncResult.Begin(WriteAsync(buffer, offset, count, CancellationToken.None), callback, state);

    public override void EndWrite(IAsyncResult asyncResult) => TaskToAsyncResult.End(asyncResult);
}
