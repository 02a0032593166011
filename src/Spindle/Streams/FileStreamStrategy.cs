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

    /// <summary>Flushes buffered data and, when asked, the OS caches to the device.</summary>
    internal abstract void Flush(bool flushToDisk);

    internal abstract void Lock(long position, long length);

    internal abstract void Unlock(long position, long length);

    /// <summary>Called by <see cref="SpindleFileStream"/>'s <c>Dispose(bool)</c> and finalizer.</summary>
    internal void DisposeInternal(bool disposing) => Dispose(disposing);

    public sealed override void Flush() => Flush(flushToDisk: false);
}
