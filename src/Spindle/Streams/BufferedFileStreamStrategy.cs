using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;

namespace Spindle.Streams;

/// <summary>
/// The buffer stacked on an OS strategy when the buffer size is above 1. One buffer, allocated on first
/// use, holds either read-ahead data or unwritten data, never both. Requests at least as large as the
/// buffer bypass it. Asynchronous operations are serialised with a semaphore whose uncontended wait
/// completes synchronously without allocating, and the position moves when each one completes.
/// </summary>
internal sealed class BufferedFileStreamStrategy : FileStreamStrategy
{
    // The layer below, which owns the handle and the position of the next unbuffered operation. Typed as
    // the OS layer (the only one a buffer is stacked on) so that its sealed members (IsClosed, CanRead,
    // CanWrite) are direct calls the JIT inlines on every buffered call.
    private readonly OSFileStreamStrategy _strategy;
    // The capacity of the buffer.
    private readonly int _bufferSize;
    // The buffer; empty until first needed (see AllocateBuffer).
    private byte[]? _buffer;
    // Bytes of the buffer that wait to be written; when positive, there is no read data.
    private int _writePos;
    // Next byte of read data to hand out; read data is _buffer[_readPos.._readLen].
    private int _readPos;
    // End of the read data in the buffer.
    private int _readLen;
    // Serialises asynchronous operations; created on the first one.
    private SemaphoreSlim? _asyncActiveSemaphore;
    // The last Task<int> a synchronously completed ReadAsync(byte[]) returned, reused for the same count.
    private Task<int>? _lastSyncCompletedReadTask;

    internal BufferedFileStreamStrategy(OSFileStreamStrategy strategy, int bufferSize)
    {
        _strategy = strategy;
        _bufferSize = bufferSize;
    }

    public override bool CanRead => _strategy.CanRead;

    public override bool CanWrite => _strategy.CanWrite;

    public override bool CanSeek => _strategy.CanSeek;

    internal override bool IsAsync => _strategy.IsAsync;

    internal override bool IsClosed => _strategy.IsClosed;

    internal override string Name => _strategy.Name;

    internal override IoEngine Engine => _strategy.Engine;

    // Buffered bytes must reach the file even when the stream is never disposed.
    internal override bool RequiresFinalizer => true;

    internal override void Lock(long position, long length) => _strategy.Lock(position, length);

    internal override void Unlock(long position, long length) => _strategy.Unlock(position, length);

    internal override SafeFileHandle SafeFileHandle
    {
        get
        {
            // Whoever uses the handle directly must see the buffered writes and the stream's position.
            if (!_strategy.IsClosed)
            {
                Flush(flushToDisk: false);
            }
            return _strategy.SafeFileHandle;
        }
    }

    public override long Length
    {
        get
        {
            long length = _strategy.Length;
            if (_writePos > 0 && _strategy.Position + _writePos > length)
            {
                length = _strategy.Position + _writePos;
            }
            return length;
        }
    }

    public override long Position
    {
        get => _strategy.Position + (_readPos - _readLen + _writePos);
        set
        {
            if (_writePos > 0)
            {
                FlushWrite();
            }
            _readPos = 0;
            _readLen = 0;
            _strategy.Position = value;
        }
    }

    /// <summary>
    /// The one place the buffer is allocated, so that a mode with alignment rules (O_DIRECT) can supply
    /// its own memory here.
    /// </summary>
    private byte[] AllocateBuffer() => GC.AllocateUninitializedArray<byte>(_bufferSize);

    private void EnsureBufferAllocated()
    {
        if (_buffer is null)
        {
            _buffer = AllocateBuffer();
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void EnsureNotClosed()
    {
        if (_strategy.IsClosed)
        {
            ThrowHelper.ThrowFileClosed();
        }
    }

    private void EnsureCanRead()
    {
        if (!_strategy.CanRead)
        {
            StreamThrowHelper.ThrowUnreadable();
        }
    }

    private void EnsureCanWrite()
    {
        if (!_strategy.CanWrite)
        {
            StreamThrowHelper.ThrowUnwritable();
        }
    }

    // ---- Synchronous reads ----

    public override int Read(byte[] buffer, int offset, int count) => Read(new Span<byte>(buffer, offset, count));

    [MethodImpl(MethodImplOptions.AggressiveInlining)] // into Read(byte[], int, int): one call less per buffered read
    public override int Read(Span<byte> destination)
    {
        EnsureNotClosed();
        // Served from read data alone: the common case of small reads, kept small enough to inline.
        int available = _readLen - _readPos;
        if (available >= destination.Length && available > 0)
        {
            _buffer.AsSpan(_readPos, destination.Length).CopyTo(destination);
            _readPos += destination.Length;
            return destination.Length;
        }
        return ReadSlow(destination, available);
    }

    private int ReadSlow(Span<byte> destination, int available)
    {
        bool isBlocked = false;
        if (available == 0)
        {
            EnsureCanRead();
            if (_writePos > 0)
            {
                FlushWrite();
            }
            // Large requests, and any request on a pipe (where filling the buffer could block for data
            // the caller did not ask for), go straight to the layer below.
            if (!_strategy.CanSeek || destination.Length >= _bufferSize)
            {
                _readPos = 0;
                _readLen = 0;
                return _strategy.Read(destination);
            }
            EnsureBufferAllocated();
            available = _strategy.Read(_buffer.AsSpan(0, _bufferSize));
            if (available == 0)
            {
                return 0;
            }
            isBlocked = available < _bufferSize;
            _readPos = 0;
            _readLen = available;
        }

        int copied = Math.Min(available, destination.Length);
        _buffer.AsSpan(_readPos, copied).CopyTo(destination);
        _readPos += copied;

        // The buffer ran out before the request was satisfied: read the rest directly, unless the
        // last fill already came back short (end of file).
        if (copied < destination.Length && !isBlocked && _strategy.CanSeek)
        {
            copied += _strategy.Read(destination.Slice(copied));
            _readPos = 0;
            _readLen = 0;
        }
        return copied;
    }

    public override int ReadByte() => _readPos != _readLen ? _buffer![_readPos++] : ReadByteSlow();

    private int ReadByteSlow()
    {
        EnsureNotClosed();
        EnsureCanRead();
        if (_writePos > 0)
        {
            FlushWrite();
        }
        EnsureBufferAllocated();
        _readLen = _strategy.Read(_buffer.AsSpan(0, _bufferSize));
        _readPos = 0;
        return _readLen == 0 ? -1 : _buffer![_readPos++];
    }

    // ---- Synchronous writes ----

    public override void Write(byte[] buffer, int offset, int count) => Write(new ReadOnlySpan<byte>(buffer, offset, count));

    [MethodImpl(MethodImplOptions.AggressiveInlining)] // into Write(byte[], int, int): one call less per buffered write
    public override void Write(ReadOnlySpan<byte> source)
    {
        // Fits behind unwritten data: the common case of small writes, kept small enough to inline.
        if (_writePos > 0 && _bufferSize - _writePos >= source.Length)
        {
            EnsureNotClosed();
            source.CopyTo(_buffer.AsSpan(_writePos));
            _writePos += source.Length;
            return;
        }
        WriteSlow(source);
    }

    private void WriteSlow(ReadOnlySpan<byte> source)
    {
        if (_writePos == 0)
        {
            EnsureNotClosed();
            EnsureCanWrite();
            ClearReadBufferBeforeWrite();
        }
        else
        {
            EnsureNotClosed();
        }

        if (_writePos > 0)
        {
            int spaceLeft = _bufferSize - _writePos;
            if (spaceLeft >= source.Length)
            {
                source.CopyTo(_buffer.AsSpan(_writePos));
                _writePos += source.Length;
                return;
            }
            source.Slice(0, spaceLeft).CopyTo(_buffer.AsSpan(_writePos));
            _writePos += spaceLeft;
            source = source.Slice(spaceLeft);
            FlushWrite();
        }

        if (source.Length >= _bufferSize)
        {
            _strategy.Write(source);
            return;
        }
        if (source.Length == 0)
        {
            return;
        }
        EnsureBufferAllocated();
        source.CopyTo(_buffer);
        _writePos = source.Length;
    }

    public override void WriteByte(byte value)
    {
        if (_writePos > 0 && _writePos < _bufferSize - 1)
        {
            _buffer![_writePos++] = value;
        }
        else
        {
            WriteByteSlow(value);
        }
    }

    private void WriteByteSlow(byte value)
    {
        EnsureNotClosed();
        if (_writePos == 0)
        {
            EnsureCanWrite();
            ClearReadBufferBeforeWrite();
            EnsureBufferAllocated();
        }
        // System.IO writes the buffer out as soon as it is full, not on the next byte.
        if (_writePos >= _bufferSize - 1)
        {
            FlushWrite();
        }
        _buffer![_writePos++] = value;
    }

    // ---- Position, length ----

    public override long Seek(long offset, SeekOrigin origin)
    {
        EnsureNotClosed();
        if (_writePos > 0)
        {
            FlushWrite();
            return _strategy.Seek(offset, origin);
        }

        // The layer below is ahead of this stream by the unread part of the buffer.
        if (_readLen - _readPos > 0 && origin == SeekOrigin.Current)
        {
            offset -= _readLen - _readPos;
        }
        long oldPosition = Position;
        long newPosition = _strategy.Seek(offset, origin);

        // A destination inside the read buffer keeps it.
        long readPos = newPosition - (oldPosition - _readPos);
        if (readPos >= 0 && readPos < _readLen)
        {
            _readPos = (int)readPos;
            _strategy.Seek(_readLen - _readPos, SeekOrigin.Current);
        }
        else
        {
            _readPos = 0;
            _readLen = 0;
        }
        return newPosition;
    }

    public override void SetLength(long value)
    {
        Flush(flushToDisk: false);
        _strategy.SetLength(value);
    }

    // ---- Flushing ----

    internal override void Flush(bool flushToDisk)
    {
        EnsureNotClosed();
        if (_writePos > 0 && _strategy.CanWrite)
        {
            FlushWrite();
        }
        else if (_readPos < _readLen && _strategy.CanSeek)
        {
            // On a pipe the read-ahead cannot be given back; System.IO keeps it rather than lose it.
            FlushRead();
        }
        _strategy.Flush(flushToDisk);
    }

    private void FlushWrite()
    {
        _strategy.Write(_buffer.AsSpan(0, _writePos));
        _writePos = 0;
    }

    /// <summary>Drops the read-ahead and moves the layer below back to this stream's position.</summary>
    private void FlushRead()
    {
        if (_readPos - _readLen != 0)
        {
            _strategy.Seek(_readPos - _readLen, SeekOrigin.Current);
        }
        _readPos = 0;
        _readLen = 0;
    }

    private void ClearReadBufferBeforeWrite()
    {
        if (_readPos == _readLen)
        {
            _readPos = 0;
            _readLen = 0;
            return;
        }
        if (!_strategy.CanSeek)
        {
            StreamThrowHelper.ThrowCannotWriteWithUnflushableReadBuffer();
        }
        FlushRead();
    }

    // ---- Asynchronous operations ----

    private SemaphoreSlim EnsureAsyncActiveSemaphoreInitialized() =>
        Volatile.Read(ref _asyncActiveSemaphore) ??
        Interlocked.CompareExchange(ref _asyncActiveSemaphore, new SemaphoreSlim(1, 1), null) ??
        _asyncActiveSemaphore;

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
    {
        ValueTask<int> pending = ReadAsync(new Memory<byte>(buffer, offset, count), cancellationToken);
        if (!pending.IsCompletedSuccessfully)
        {
            return pending.AsTask();
        }
        // Reads served from the buffer usually return the same count: reuse the task.
        int read = pending.Result;
        Task<int>? last = _lastSyncCompletedReadTask;
        if (last is null || last.Result != read)
        {
            _lastSyncCompletedReadTask = last = Task.FromResult(read);
        }
        return last;
    }

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled<int>(cancellationToken);
        }
        EnsureNotClosed();
        EnsureCanRead();

        if (!_strategy.CanSeek)
        {
            return ReadFromUnseekableAsync(buffer, cancellationToken);
        }

        SemaphoreSlim semaphore = EnsureAsyncActiveSemaphoreInitialized();
        Task semaphoreLockTask = semaphore.WaitAsync(cancellationToken);
        if (semaphoreLockTask.IsCompletedSuccessfully && _writePos == 0)
        {
            if (_readLen - _readPos >= buffer.Length)
            {
                // Served from the buffer: no I/O, completes synchronously.
                _buffer.AsSpan(_readPos, buffer.Length).CopyTo(buffer.Span);
                _readPos += buffer.Length;
                semaphore.Release();
                return new ValueTask<int>(buffer.Length);
            }
            if (_readLen == _readPos && buffer.Length >= _bufferSize)
            {
                // Large read with an empty buffer: straight to the layer below; the lock is held until it ends.
                _readPos = 0;
                _readLen = 0;
                ValueTask<int> direct;
                try
                {
                    direct = _strategy.ReadAsync(buffer, cancellationToken);
                }
                catch
                {
                    semaphore.Release();
                    throw;
                }
                if (direct.IsCompletedSuccessfully)
                {
                    int read = direct.Result;
                    semaphore.Release();
                    return new ValueTask<int>(read);
                }
                return ReleaseAfterAsync(direct, semaphore);
            }
        }
        return ReadAsyncSlowPath(semaphoreLockTask, buffer, cancellationToken);
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private static async ValueTask<int> ReleaseAfterAsync(ValueTask<int> pending, SemaphoreSlim semaphore)
    {
        try
        {
            return await pending.ConfigureAwait(false);
        }
        finally
        {
            semaphore.Release();
        }
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<int> ReadAsyncSlowPath(Task semaphoreLockTask, Memory<byte> buffer, CancellationToken cancellationToken)
    {
        await semaphoreLockTask.ConfigureAwait(false);
        try
        {
            int alreadyCopied = 0;
            if (_writePos > 0)
            {
                // The asynchronous flush of seed 002: the pending bytes go out from the one buffer.
                await _strategy.WriteAsync(_buffer.AsMemory(0, _writePos), cancellationToken).ConfigureAwait(false);
                _writePos = 0;
            }
            else if (_readPos < _readLen)
            {
                alreadyCopied = Math.Min(buffer.Length, _readLen - _readPos);
                _buffer.AsSpan(_readPos, alreadyCopied).CopyTo(buffer.Span);
                _readPos += alreadyCopied;
                if (alreadyCopied == buffer.Length)
                {
                    return alreadyCopied;
                }
                buffer = buffer.Slice(alreadyCopied);
            }
            _readPos = 0;
            _readLen = 0;

            if (buffer.Length >= _bufferSize)
            {
                return alreadyCopied + await _strategy.ReadAsync(buffer, cancellationToken).ConfigureAwait(false);
            }

            // One system call refills the buffer; the caller gets what it asked for from it.
            EnsureBufferAllocated();
            _readLen = await _strategy.ReadAsync(_buffer.AsMemory(0, _bufferSize), cancellationToken).ConfigureAwait(false);
            int copied = Math.Min(_readLen, buffer.Length);
            _buffer.AsSpan(0, copied).CopyTo(buffer.Span);
            _readPos = copied;
            return alreadyCopied + copied;
        }
        finally
        {
            _asyncActiveSemaphore!.Release();
        }
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<int> ReadFromUnseekableAsync(Memory<byte> destination, CancellationToken cancellationToken)
    {
        await EnsureAsyncActiveSemaphoreInitialized().WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            // Never wait to fill the buffer from a pipe: the data the caller needs may be all there is.
            if (_readPos < _readLen)
            {
                int copied = Math.Min(_readLen - _readPos, destination.Length);
                _buffer.AsSpan(_readPos, copied).CopyTo(destination.Span);
                _readPos += copied;
                return copied;
            }
            return await _strategy.ReadAsync(destination, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            _asyncActiveSemaphore!.Release();
        }
    }

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
        => WriteAsync(new ReadOnlyMemory<byte>(buffer, offset, count), cancellationToken).AsTask();

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled(cancellationToken);
        }
        EnsureNotClosed();
        EnsureCanWrite();

        if (!_strategy.CanSeek)
        {
            return WriteToUnseekableAsync(buffer, cancellationToken);
        }

        SemaphoreSlim semaphore = EnsureAsyncActiveSemaphoreInitialized();
        Task semaphoreLockTask = semaphore.WaitAsync(cancellationToken);
        if (semaphoreLockTask.IsCompletedSuccessfully)
        {
            bool releaseTheLock = true;
            try
            {
                if (_writePos == 0)
                {
                    ClearReadBufferBeforeWrite();
                }
                // Fits in the buffer: a copy, completed synchronously.
                if (_bufferSize - _writePos > buffer.Length || (_writePos > 0 && _bufferSize - _writePos == buffer.Length))
                {
                    EnsureBufferAllocated();
                    buffer.Span.CopyTo(_buffer.AsSpan(_writePos));
                    _writePos += buffer.Length;
                    return default;
                }
                releaseTheLock = false;
            }
            finally
            {
                if (releaseTheLock)
                {
                    semaphore.Release();
                }
            }
        }
        return WriteAsyncSlowPath(semaphoreLockTask, buffer, cancellationToken);
    }

    /// <summary>
    /// Pipes get asynchronous writes straight away, as in System.IO: data held back in the buffer could be
    /// exactly what the other side waits for before it answers. Earlier synchronous writes still go first.
    /// </summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask WriteToUnseekableAsync(ReadOnlyMemory<byte> source, CancellationToken cancellationToken)
    {
        await EnsureAsyncActiveSemaphoreInitialized().WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            if (_writePos > 0)
            {
                await _strategy.WriteAsync(_buffer.AsMemory(0, _writePos), cancellationToken).ConfigureAwait(false);
                _writePos = 0;
            }
            await _strategy.WriteAsync(source, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            _asyncActiveSemaphore!.Release();
        }
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask WriteAsyncSlowPath(Task semaphoreLockTask, ReadOnlyMemory<byte> source, CancellationToken cancellationToken)
    {
        await semaphoreLockTask.ConfigureAwait(false);
        try
        {
            if (_writePos == 0)
            {
                ClearReadBufferBeforeWrite();
            }
            if (_writePos > 0)
            {
                int spaceLeft = _bufferSize - _writePos;
                if (spaceLeft >= source.Length)
                {
                    source.Span.CopyTo(_buffer.AsSpan(_writePos));
                    _writePos += source.Length;
                    return;
                }
                // Top the buffer up and write it out asynchronously; the rest waits for it (seed 002:
                // no second buffer).
                source.Span.Slice(0, spaceLeft).CopyTo(_buffer.AsSpan(_writePos));
                _writePos += spaceLeft;
                source = source.Slice(spaceLeft);
                await _strategy.WriteAsync(_buffer.AsMemory(0, _writePos), cancellationToken).ConfigureAwait(false);
                _writePos = 0;
            }

            if (source.Length >= _bufferSize)
            {
                await _strategy.WriteAsync(source, cancellationToken).ConfigureAwait(false);
                return;
            }
            if (source.Length == 0)
            {
                return;
            }
            EnsureBufferAllocated();
            source.Span.CopyTo(_buffer);
            _writePos = source.Length;
        }
        finally
        {
            _asyncActiveSemaphore!.Release();
        }
    }

    public override IAsyncResult BeginRead(byte[] buffer, int offset, int count, AsyncCallback? callback, object? state)
        => TaskToAsyncResult.Begin(ReadAsync(buffer, offset, count, CancellationToken.None), callback, state);

    public override int EndRead(IAsyncResult asyncResult) => TaskToAsyncResult.End<int>(asyncResult);

    public override IAsyncResult BeginWrite(byte[] buffer, int offset, int count, AsyncCallback? callback, object? state)
        => TaskToAsyncResult.Begin(WriteAsync(buffer, offset, count, CancellationToken.None), callback, state);

    public override void EndWrite(IAsyncResult asyncResult) => TaskToAsyncResult.End(asyncResult);

    public override Task FlushAsync(CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return Task.FromCanceled(cancellationToken);
        }
        EnsureNotClosed();
        return FlushAsyncInternal(cancellationToken);
    }

    private async Task FlushAsyncInternal(CancellationToken cancellationToken)
    {
        await EnsureAsyncActiveSemaphoreInitialized().WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            if (_writePos > 0)
            {
                await _strategy.WriteAsync(_buffer.AsMemory(0, _writePos), cancellationToken).ConfigureAwait(false);
                _writePos = 0;
            }
            else if (_readPos < _readLen && _strategy.CanSeek)
            {
                FlushRead();
            }
        }
        finally
        {
            _asyncActiveSemaphore!.Release();
        }
    }

    public override void CopyTo(Stream destination, int bufferSize)
    {
        EnsureNotClosed();
        EnsureCanRead();
        // Buffered bytes first, then the rest of the file straight from the layer below.
        if (_readPos < _readLen)
        {
            destination.Write(_buffer.AsSpan(_readPos, _readLen - _readPos));
            _readPos = 0;
            _readLen = 0;
        }
        else if (_writePos > 0)
        {
            FlushWrite();
        }
        _strategy.CopyTo(destination, bufferSize);
    }

    public override Task CopyToAsync(Stream destination, int bufferSize, CancellationToken cancellationToken)
    {
        // Like FileStream: a closed or unreadable stream throws at once, before the write buffer is touched.
        EnsureNotClosed();
        EnsureCanRead();
        return cancellationToken.IsCancellationRequested
            ? Task.FromCanceled(cancellationToken)
            : CopyToAsyncCore(destination, bufferSize, cancellationToken);
    }

    private async Task CopyToAsyncCore(Stream destination, int bufferSize, CancellationToken cancellationToken)
    {
        // Buffered bytes first, then the rest of the file straight from the layer below.
        await EnsureAsyncActiveSemaphoreInitialized().WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            if (_writePos > 0)
            {
                await _strategy.WriteAsync(_buffer.AsMemory(0, _writePos), cancellationToken).ConfigureAwait(false);
                _writePos = 0;
            }
            else if (_readPos < _readLen)
            {
                await destination.WriteAsync(_buffer.AsMemory(_readPos, _readLen - _readPos), cancellationToken).ConfigureAwait(false);
                _readPos = 0;
                _readLen = 0;
            }
        }
        finally
        {
            _asyncActiveSemaphore!.Release();
        }
        await _strategy.CopyToAsync(destination, bufferSize, cancellationToken).ConfigureAwait(false);
    }

    // ---- Disposal ----

    protected override void Dispose(bool disposing)
    {
        if (_strategy.IsClosed)
        {
            return;
        }
        try
        {
            Flush(flushToDisk: false);
        }
        catch (Exception e) when (!disposing && e is IOException or UnauthorizedAccessException or NotSupportedException)
        {
            // A finalizer cannot report a failed flush; System.IO drops it too.
        }
        finally
        {
            _writePos = 0;
            _readPos = 0;
            _readLen = 0;
            _strategy.DisposeInternal(disposing);
        }
    }

    public override async ValueTask DisposeAsync()
    {
        if (_strategy.IsClosed)
        {
            return;
        }
        try
        {
            await FlushAsync(CancellationToken.None).ConfigureAwait(false);
        }
        finally
        {
            _writePos = 0;
            _readPos = 0;
            _readLen = 0;
            _strategy.DisposeInternal(disposing: true);
        }
    }
}
