using System.Runtime.Versioning;
using Microsoft.Win32.SafeHandles;
using Spindle.Engines;
using Spindle.Handles;
using Spindle.Streams;

namespace Spindle;

/// <summary>
/// A <see cref="Stream"/> over a file with the behaviour of <see cref="FileStream"/> on Linux: the
/// position is kept in memory (<see cref="Seek"/> and <see cref="Position"/> make no system call), each
/// unbuffered read or write is one system call or one engine operation, and a buffer of
/// <c>bufferSize</c> bytes (0 or 1 disables it) is stacked on top. Asynchronous calls run on
/// <see cref="Engine"/>.
/// </summary>
/// <remarks>
/// Built from strategies as .NET's FileStream is: an OS strategy that owns the handle and the position
/// (one for seekable files, one for pipes, sockets and character devices), a buffering strategy, and a
/// strategy that routes calls through the overrides of a derived type. Like FileStream, an instance is
/// not thread-safe; asynchronous operations on a buffered stream are serialised.
/// </remarks>
public partial class SpindleFileStream : Stream
{
    private const FileShare DefaultShare = FileShare.Read;
    private const int DefaultBufferSize = 4096;

    // Everything the stream does is delegated to this stack of strategies.
    private readonly FileStreamStrategy _strategy;

    /// <summary>Opens a file with the mode, access, share, options, buffer size, preallocation, create mode and engine of <paramref name="options"/>.</summary>
    /// <param name="path">The path of the file, relative or absolute.</param>
    /// <param name="options">How to open the file and run the stream.</param>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> or <paramref name="options"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty, or the options contradict each other.</exception>
    /// <exception cref="FileNotFoundException">The file does not exist and the mode does not create it.</exception>
    /// <exception cref="UnauthorizedAccessException">Access is denied, or the path is a directory.</exception>
    /// <exception cref="IOException">Any other error, for example a sharing violation.</exception>
    public SpindleFileStream(string path, SpindleFileOptions options)
    {
        StreamValidation.ValidateOptions(path, options);
        if (Portable.PassThrough.Enabled)
        {
            _strategy = PassThroughFileStreamStrategy.Open(this, path, options);
            SuppressFinalizerIfUnneeded();
            return;
        }
        SafeFileHandle handle = OptionsOpen.Open(path, options, out OpenedFile opened);
        bool isAsync = (options.Options & FileOptions.Asynchronous) != 0;
        _strategy = StrategyFactory.ForOpenedFile(this, handle, options.Mode, options.Access, options.BufferSize, isAsync, options.Engine,
            SpindleOpenFlags.For(options), opened);
        SuppressFinalizerIfUnneeded();
    }

    /// <summary>
    /// Opens a file with a <see cref="FileStreamOptions"/>, so that code moving from <see cref="FileStream"/> only
    /// renames the type; the stream uses <see cref="IoEngine.Auto"/>.
    /// </summary>
    /// <param name="path">The path of the file, relative or absolute.</param>
    /// <param name="options">How to open the file.</param>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> or <paramref name="options"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty, or the options contradict each other.</exception>
    /// <exception cref="IOException">The file could not be opened.</exception>
    public SpindleFileStream(string path, FileStreamOptions options)
        : this(path, StreamValidation.ToSpindleOptions(path, options))
    {
    }

    /// <summary>Opens a file for reading and writing (writing only for <see cref="FileMode.Append"/>), shared for reading, with a 4096-byte buffer.</summary>
    /// <param name="path">The path of the file.</param>
    /// <param name="mode">Whether to create, open, truncate or append.</param>
    /// <exception cref="ArgumentException">The path is empty.</exception>
    /// <exception cref="ArgumentNullException">The path is null.</exception>
    /// <exception cref="IOException">The file could not be opened.</exception>
    public SpindleFileStream(string path, FileMode mode)
        : this(path, mode, mode == FileMode.Append ? FileAccess.Write : FileAccess.ReadWrite, DefaultShare, DefaultBufferSize, FileOptions.None)
    {
    }

    /// <summary>Opens a file with the given access, shared for reading, with a 4096-byte buffer.</summary>
    /// <param name="path">The path of the file.</param>
    /// <param name="mode">Whether to create, open, truncate or append.</param>
    /// <param name="access">What the stream may do.</param>
    /// <exception cref="ArgumentException">The path is empty or the mode and access contradict each other.</exception>
    /// <exception cref="IOException">The file could not be opened.</exception>
    public SpindleFileStream(string path, FileMode mode, FileAccess access)
        : this(path, mode, access, DefaultShare, DefaultBufferSize, FileOptions.None)
    {
    }

    /// <summary>Opens a file with the given access and sharing, with a 4096-byte buffer.</summary>
    /// <param name="path">The path of the file.</param>
    /// <param name="mode">Whether to create, open, truncate or append.</param>
    /// <param name="access">What the stream may do.</param>
    /// <param name="share">What other handles may do, emulated with advisory <c>flock</c>.</param>
    /// <exception cref="ArgumentException">The path is empty or the mode and access contradict each other.</exception>
    /// <exception cref="IOException">The file could not be opened.</exception>
    public SpindleFileStream(string path, FileMode mode, FileAccess access, FileShare share)
        : this(path, mode, access, share, DefaultBufferSize, FileOptions.None)
    {
    }

    /// <summary>Opens a file with the given access, sharing and buffer size.</summary>
    /// <param name="path">The path of the file.</param>
    /// <param name="mode">Whether to create, open, truncate or append.</param>
    /// <param name="access">What the stream may do.</param>
    /// <param name="share">What other handles may do.</param>
    /// <param name="bufferSize">The buffer size in bytes; 0 or 1 disables buffering.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="bufferSize"/> is negative.</exception>
    /// <exception cref="IOException">The file could not be opened.</exception>
    public SpindleFileStream(string path, FileMode mode, FileAccess access, FileShare share, int bufferSize)
        : this(path, mode, access, share, bufferSize, FileOptions.None)
    {
    }

    /// <summary>Opens a file with the given access, sharing and buffer size, for synchronous or asynchronous I/O.</summary>
    /// <param name="path">The path of the file.</param>
    /// <param name="mode">Whether to create, open, truncate or append.</param>
    /// <param name="access">What the stream may do.</param>
    /// <param name="share">What other handles may do.</param>
    /// <param name="bufferSize">The buffer size in bytes; 0 or 1 disables buffering.</param>
    /// <param name="useAsync">Whether to open the file for asynchronous I/O.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="bufferSize"/> is negative.</exception>
    /// <exception cref="IOException">The file could not be opened.</exception>
    public SpindleFileStream(string path, FileMode mode, FileAccess access, FileShare share, int bufferSize, bool useAsync)
        : this(path, mode, access, share, bufferSize, useAsync ? FileOptions.Asynchronous : FileOptions.None)
    {
    }

    /// <summary>Opens a file with the given access, sharing, buffer size and options.</summary>
    /// <param name="path">The path of the file.</param>
    /// <param name="mode">Whether to create, open, truncate or append.</param>
    /// <param name="access">What the stream may do.</param>
    /// <param name="share">What other handles may do.</param>
    /// <param name="bufferSize">The buffer size in bytes; 0 or 1 disables buffering.</param>
    /// <param name="options">Advanced options; <see cref="FileOptions.Asynchronous"/> runs *Async calls on the process's default engine.</param>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty or the mode and access contradict each other.</exception>
    /// <exception cref="ArgumentOutOfRangeException">An enum is out of range or <paramref name="bufferSize"/> is negative.</exception>
    /// <exception cref="FileNotFoundException">The file does not exist and the mode does not create it.</exception>
    /// <exception cref="IOException">The file could not be opened.</exception>
    public SpindleFileStream(string path, FileMode mode, FileAccess access, FileShare share, int bufferSize, FileOptions options)
    {
        StreamValidation.ValidatePathArguments(path, mode, access, share, bufferSize, options);
        if (Portable.PassThrough.Enabled)
        {
            _strategy = PassThroughFileStreamStrategy.Open(this, path, mode, access, share, bufferSize, options);
            SuppressFinalizerIfUnneeded();
            return;
        }
        SafeFileHandle handle = FileOpener.Open(path, mode, access, share, options, preallocationSize: 0, unixCreateMode: null, SpindleOpenFlags.For(options),
            out OpenedFile opened);
        _strategy = StrategyFactory.ForOpenedFile(this, handle, mode, access, bufferSize, (options & FileOptions.Asynchronous) != 0, IoEngine.Auto,
            SpindleOpenFlags.For(options), opened);
        SuppressFinalizerIfUnneeded();
    }

    /// <summary>
    /// Wraps an open handle, which the stream then owns, with a 4096-byte buffer. The handle's current OS
    /// offset becomes the position; <see cref="IsAsync"/> is the handle's.
    /// </summary>
    /// <param name="handle">An open handle, from Spindle or System.IO.</param>
    /// <param name="access">What the stream may do; must agree with how the handle was opened.</param>
    /// <exception cref="ArgumentNullException"><paramref name="handle"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="handle"/> is invalid.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="access"/> is out of range.</exception>
    /// <exception cref="ObjectDisposedException"><paramref name="handle"/> is closed.</exception>
    public SpindleFileStream(SafeFileHandle handle, FileAccess access)
        : this(handle, access, DefaultBufferSize)
    {
    }

    /// <summary>
    /// Wraps an open handle, which the stream then owns. The handle's current OS offset becomes the
    /// position; <see cref="IsAsync"/> is the handle's.
    /// </summary>
    /// <param name="handle">An open handle, from Spindle or System.IO.</param>
    /// <param name="access">What the stream may do; must agree with how the handle was opened.</param>
    /// <param name="bufferSize">The buffer size in bytes; 0 or 1 disables buffering.</param>
    /// <exception cref="ArgumentNullException"><paramref name="handle"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="handle"/> is invalid.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="access"/> is out of range or <paramref name="bufferSize"/> negative.</exception>
    /// <exception cref="ObjectDisposedException"><paramref name="handle"/> is closed.</exception>
    public SpindleFileStream(SafeFileHandle handle, FileAccess access, int bufferSize)
    {
        StreamValidation.ValidateHandle(handle, access, bufferSize);
        _strategy = StrategyFactory.ForHandle(this, handle, access, bufferSize, handle.IsAsync);
        SuppressFinalizerIfUnneeded();
    }

    /// <summary>Wraps an open handle, which the stream then owns, for synchronous or asynchronous I/O.</summary>
    /// <param name="handle">An open handle, from Spindle or System.IO.</param>
    /// <param name="access">What the stream may do.</param>
    /// <param name="bufferSize">The buffer size in bytes; 0 or 1 disables buffering.</param>
    /// <param name="isAsync">Whether the stream runs *Async calls on the default asynchronous engine.</param>
    /// <exception cref="ArgumentNullException"><paramref name="handle"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="handle"/> is invalid.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="access"/> is out of range or <paramref name="bufferSize"/> negative.</exception>
    /// <exception cref="ObjectDisposedException"><paramref name="handle"/> is closed.</exception>
    /// <exception cref="ArgumentException"><paramref name="isAsync"/> disagrees with how the handle was opened.</exception>
    public SpindleFileStream(SafeFileHandle handle, FileAccess access, int bufferSize, bool isAsync)
    {
        StreamValidation.ValidateHandle(handle, access, bufferSize, isAsync);
        _strategy = StrategyFactory.ForHandle(this, handle, access, bufferSize, isAsync);
        SuppressFinalizerIfUnneeded();
    }

    /// <summary>Flushes buffered data if the stream was not disposed.</summary>
    ~SpindleFileStream()
    {
        Dispose(false);
    }

    /// <summary>The engine that runs this stream's asynchronous operations (never <see cref="IoEngine.Auto"/>).</summary>
    public IoEngine Engine => _strategy.Engine;

    /// <summary>Whether the file was opened for asynchronous I/O.</summary>
    public virtual bool IsAsync => _strategy.IsAsync;

    /// <summary>The absolute path of the file, or <c>[Unknown]</c> for a handle whose path is not known.</summary>
    public virtual string Name => _strategy.Name;

    /// <summary>The handle, after buffered data is written and the OS offset is set to <see cref="Position"/>.</summary>
    public virtual SafeFileHandle SafeFileHandle => _strategy.SafeFileHandle;

    /// <inheritdoc/>
    public override bool CanRead => _strategy.CanRead;

    /// <inheritdoc/>
    public override bool CanWrite => _strategy.CanWrite;

    /// <inheritdoc/>
    public override bool CanSeek => _strategy.CanSeek;

    /// <summary>The length of the file in bytes, including buffered bytes not yet written.</summary>
    /// <exception cref="ObjectDisposedException">The stream is closed.</exception>
    /// <exception cref="NotSupportedException">The stream cannot seek.</exception>
    public override long Length
    {
        get
        {
            if (_strategy.IsClosed)
            {
                ThrowHelper.ThrowFileClosed();
            }
            if (!CanSeek)
            {
                ThrowHelper.ThrowUnseekable();
            }
            return _strategy.Length;
        }
    }

    /// <summary>The position in the file; kept in memory, so reading or setting it makes no system call.</summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is negative.</exception>
    /// <exception cref="ObjectDisposedException">The stream is closed.</exception>
    /// <exception cref="NotSupportedException">The stream cannot seek.</exception>
    public override long Position
    {
        get
        {
            if (_strategy.IsClosed)
            {
                ThrowHelper.ThrowFileClosed();
            }
            if (!CanSeek)
            {
                ThrowHelper.ThrowUnseekable();
            }
            return _strategy.Position;
        }
        set
        {
            if (value < 0)
            {
                ThrowHelper.ThrowNeedNonNegative(nameof(value));
            }
            if (_strategy.IsClosed)
            {
                ThrowHelper.ThrowFileClosed();
            }
            if (!CanSeek)
            {
                ThrowHelper.ThrowUnseekable();
            }
            _strategy.Position = value;
        }
    }

    /// <summary>Sets the position; makes no system call unless <paramref name="origin"/> is <see cref="SeekOrigin.End"/> (which needs the length).</summary>
    /// <param name="offset">The offset relative to <paramref name="origin"/>.</param>
    /// <param name="origin">Where the offset counts from.</param>
    /// <returns>The new position.</returns>
    /// <exception cref="ArgumentException"><paramref name="origin"/> is invalid.</exception>
    /// <exception cref="IOException">The position would be negative, or before the start of an append.</exception>
    public override long Seek(long offset, SeekOrigin origin)
    {
        if (origin < SeekOrigin.Begin || origin > SeekOrigin.End)
        {
            StreamThrowHelper.ThrowInvalidSeekOrigin(nameof(origin));
        }
        if (!CanSeek)
        {
            if (_strategy.IsClosed)
            {
                ThrowHelper.ThrowFileClosed();
            }
            ThrowHelper.ThrowUnseekable();
        }
        return _strategy.Seek(offset, origin);
    }

    /// <summary>Sets the length of the file; the position moves back if it was past the new end.</summary>
    /// <param name="value">The new length.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="value"/> is negative.</exception>
    /// <exception cref="NotSupportedException">The stream cannot seek or cannot write.</exception>
    /// <exception cref="IOException">The length is before the start of an append.</exception>
    public override void SetLength(long value)
    {
        if (value < 0)
        {
            ThrowHelper.ThrowNeedNonNegative(nameof(value));
        }
        if (_strategy.IsClosed)
        {
            ThrowHelper.ThrowFileClosed();
        }
        if (!CanSeek)
        {
            ThrowHelper.ThrowUnseekable();
        }
        if (!CanWrite)
        {
            StreamThrowHelper.ThrowUnwritable();
        }
        _strategy.SetLength(value);
    }

    /// <inheritdoc/>
    public override int Read(byte[] buffer, int offset, int count)
    {
        ValidateReadWriteArguments(buffer, offset, count);
        return _strategy.Read(buffer, offset, count);
    }

    /// <inheritdoc/>
    public override int Read(Span<byte> buffer) => _strategy.Read(buffer);

    /// <inheritdoc/>
    public override int ReadByte() => _strategy.ReadByte();

    /// <inheritdoc/>
    public override void Write(byte[] buffer, int offset, int count)
    {
        ValidateReadWriteArguments(buffer, offset, count);
        _strategy.Write(buffer, offset, count);
    }

    /// <inheritdoc/>
    public override void Write(ReadOnlySpan<byte> buffer) => _strategy.Write(buffer);

    /// <inheritdoc/>
    public override void WriteByte(byte value) => _strategy.WriteByte(value);

    /// <inheritdoc/>
    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
    {
        ValidateBufferArguments(buffer, offset, count);
        if (cancellationToken.IsCancellationRequested)
        {
            return Task.FromCanceled<int>(cancellationToken);
        }
        EnsureReadable();
        return _strategy.ReadAsync(buffer, offset, count, cancellationToken);
    }

    /// <inheritdoc/>
    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled<int>(cancellationToken);
        }
        EnsureReadable();
        return _strategy.ReadAsync(buffer, cancellationToken);
    }

    /// <inheritdoc/>
    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
    {
        ValidateBufferArguments(buffer, offset, count);
        if (cancellationToken.IsCancellationRequested)
        {
            return Task.FromCanceled(cancellationToken);
        }
        EnsureWritable();
        return _strategy.WriteAsync(buffer, offset, count, cancellationToken);
    }

    /// <inheritdoc/>
    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled(cancellationToken);
        }
        EnsureWritable();
        return _strategy.WriteAsync(buffer, cancellationToken);
    }

    /// <inheritdoc/>
    public override IAsyncResult BeginRead(byte[] buffer, int offset, int count, AsyncCallback? callback, object? state)
    {
        ValidateBufferArguments(buffer, offset, count);
        EnsureReadable();
        return _strategy.BeginRead(buffer, offset, count, callback, state);
    }

    /// <inheritdoc/>
    public override int EndRead(IAsyncResult asyncResult)
    {
        ArgumentNullException.ThrowIfNull(asyncResult);
        return _strategy.EndRead(asyncResult);
    }

    /// <inheritdoc/>
    public override IAsyncResult BeginWrite(byte[] buffer, int offset, int count, AsyncCallback? callback, object? state)
    {
        ValidateBufferArguments(buffer, offset, count);
        EnsureWritable();
        return _strategy.BeginWrite(buffer, offset, count, callback, state);
    }

    /// <inheritdoc/>
    public override void EndWrite(IAsyncResult asyncResult)
    {
        ArgumentNullException.ThrowIfNull(asyncResult);
        _strategy.EndWrite(asyncResult);
    }

    /// <summary>Writes buffered data to the file (not to the device; see <see cref="Flush(bool)"/>).</summary>
    /// <exception cref="ObjectDisposedException">The stream is closed.</exception>
    public override void Flush() => Flush(flushToDisk: false);

    /// <summary>Writes buffered data to the file and, when <paramref name="flushToDisk"/> is true, the OS caches to the device (<c>fsync</c>).</summary>
    /// <param name="flushToDisk">Whether to flush the OS caches too.</param>
    /// <exception cref="ObjectDisposedException">The stream is closed.</exception>
    public virtual void Flush(bool flushToDisk)
    {
        if (_strategy.IsClosed)
        {
            ThrowHelper.ThrowFileClosed();
        }
        _strategy.Flush(flushToDisk);
    }

    /// <inheritdoc/>
    public override Task FlushAsync(CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return Task.FromCanceled(cancellationToken);
        }
        if (_strategy.IsClosed)
        {
            ThrowHelper.ThrowFileClosed();
        }
        return _strategy.FlushAsync(cancellationToken);
    }

    /// <inheritdoc/>
    public override void CopyTo(Stream destination, int bufferSize)
    {
        ValidateCopyToArguments(destination, bufferSize);
        if (StreamCopy.CanCopy(_strategy, destination)) { StreamCopy.Copy(_strategy, destination, CancellationToken.None); return; } // file to file: copy_file_range
        _strategy.CopyTo(destination, bufferSize);
    }

    /// <inheritdoc/>
    public override Task CopyToAsync(Stream destination, int bufferSize, CancellationToken cancellationToken)
    {
        ValidateCopyToArguments(destination, bufferSize);
        if (StreamCopy.CanCopy(_strategy, destination)) { return Task.Run(() => StreamCopy.Copy(_strategy, destination, cancellationToken), cancellationToken); } // file to file: copy_file_range
        return _strategy.CopyToAsync(destination, bufferSize, cancellationToken);
    }

    /// <summary>Locks a byte range against other handles (<c>fcntl</c> open-file-description locks, as System.IO on Linux).</summary>
    /// <param name="position">The first byte of the range.</param>
    /// <param name="length">The number of bytes; 0 locks to the end of the file however long it gets.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="position"/> or <paramref name="length"/> is negative.</exception>
    /// <exception cref="ObjectDisposedException">The stream is closed.</exception>
    /// <exception cref="IOException">Another handle holds a conflicting lock.</exception>
    [UnsupportedOSPlatform("ios")]
    [UnsupportedOSPlatform("macos")]
    [UnsupportedOSPlatform("tvos")]
    [UnsupportedOSPlatform("freebsd")]
    public virtual void Lock(long position, long length)
    {
        ValidateLockArguments(position, length);
        _strategy.Lock(position, length);
    }

    /// <summary>Releases a byte range locked with <see cref="Lock"/>.</summary>
    /// <param name="position">The first byte of the range.</param>
    /// <param name="length">The number of bytes.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="position"/> or <paramref name="length"/> is negative.</exception>
    /// <exception cref="ObjectDisposedException">The stream is closed.</exception>
    [UnsupportedOSPlatform("ios")]
    [UnsupportedOSPlatform("macos")]
    [UnsupportedOSPlatform("tvos")]
    [UnsupportedOSPlatform("freebsd")]
    public virtual void Unlock(long position, long length)
    {
        ValidateLockArguments(position, length);
        _strategy.Unlock(position, length);
    }

    /// <summary>
    /// Writes what is buffered and closes the file asynchronously. On the io_uring engine a close that may wait for
    /// I/O (a network or FUSE file system, or <see cref="FileOptions.DeleteOnClose"/>, whose close frees the file's
    /// blocks) is a ring request, so no thread waits for it; on a local file system <c>close(2)</c> returns at once
    /// and runs on the caller's thread.
    /// </summary>
    /// <returns>A task that completes when the file is closed.</returns>
    public override ValueTask DisposeAsync()
    {
        ValueTask pending = _strategy.DisposeAsync();
        // A derived type's DisposeAsync went through Stream.DisposeAsync, which already did this.
        if (!_strategy.IsDerived)
        {
            GC.SuppressFinalize(this);
        }
        return pending;
    }

    /// <inheritdoc/>
    protected override void Dispose(bool disposing)
    {
        // Null when the constructor threw and the finalizer runs.
        _strategy?.DisposeInternal(disposing);
    }

    private void SuppressFinalizerIfUnneeded()
    {
        // Finalization costs every allocation of a stream; only a buffer that may hold unwritten bytes needs it.
        if (!_strategy.RequiresFinalizer)
        {
            GC.SuppressFinalize(this);
        }
    }

    private void ValidateReadWriteArguments(byte[] buffer, int offset, int count)
    {
        ValidateBufferArguments(buffer, offset, count);
        if (_strategy.IsClosed)
        {
            ThrowHelper.ThrowFileClosed();
        }
    }

    private void ValidateLockArguments(long position, long length)
    {
        if (position < 0 || length < 0)
        {
            ThrowHelper.ThrowNeedNonNegative(position < 0 ? nameof(position) : nameof(length));
        }
        if (_strategy.IsClosed)
        {
            ThrowHelper.ThrowFileClosed();
        }
    }

    private void EnsureReadable()
    {
        if (!_strategy.CanRead)
        {
            if (_strategy.IsClosed)
            {
                ThrowHelper.ThrowFileClosed();
            }
            StreamThrowHelper.ThrowUnreadable();
        }
    }

    private void EnsureWritable()
    {
        if (!_strategy.CanWrite)
        {
            if (_strategy.IsClosed)
            {
                ThrowHelper.ThrowFileClosed();
            }
            StreamThrowHelper.ThrowUnwritable();
        }
    }

    // Stream's own implementations, for DerivedFileStreamStrategy: they call the (possibly overridden) array overloads.
    internal int BaseRead(Span<byte> buffer) => base.Read(buffer);

    internal int BaseReadByte() => base.ReadByte();

    internal void BaseWrite(ReadOnlySpan<byte> buffer) => base.Write(buffer);

    internal void BaseWriteByte(byte value) => base.WriteByte(value);

    internal ValueTask<int> BaseReadAsync(Memory<byte> buffer, CancellationToken cancellationToken) => base.ReadAsync(buffer, cancellationToken);

    internal ValueTask BaseWriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken) => base.WriteAsync(buffer, cancellationToken);

    internal IAsyncResult BaseBeginRead(byte[] buffer, int offset, int count, AsyncCallback? callback, object? state) => base.BeginRead(buffer, offset, count, callback, state);

    internal int BaseEndRead(IAsyncResult asyncResult) => base.EndRead(asyncResult);

    internal IAsyncResult BaseBeginWrite(byte[] buffer, int offset, int count, AsyncCallback? callback, object? state) => base.BeginWrite(buffer, offset, count, callback, state);

    internal void BaseEndWrite(IAsyncResult asyncResult) => base.EndWrite(asyncResult);

    internal void BaseCopyTo(Stream destination, int bufferSize) => base.CopyTo(destination, bufferSize);

    internal Task BaseCopyToAsync(Stream destination, int bufferSize, CancellationToken cancellationToken) => base.CopyToAsync(destination, bufferSize, cancellationToken);

    internal ValueTask BaseDisposeAsync() => base.DisposeAsync();
}
