using System.Runtime.CompilerServices;

namespace Spindle.Streams;

/// <summary>
/// The buffer stacked on an OS strategy when the buffer size is above 1. One buffer, allocated on first
/// use, holds either read-ahead data or unwritten data, never both. Requests at least as large as the
/// buffer bypass it. Asynchronous operations are serialised with a semaphore whose uncontended wait
/// completes synchronously without allocating, and the position moves when each one completes.
/// </summary>
internal sealed class BufferedFileStreamStrategy : StackedFileStreamStrategy
{
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
    // The last Task<int> a synchronously completed ReadAsync(byte[]) returned, reused for the same count.
    private Task<int>? _lastSyncCompletedReadTask;

    internal BufferedFileStreamStrategy(OSFileStreamStrategy os, int bufferSize)
        : base(os)
    {
        _bufferSize = bufferSize;
    }

    public override long Length
    {
        get
        {
            long length = _os.Length;
            if (_writePos > 0 && _os.Position + _writePos > length)
            {
                length = _os.Position + _writePos;
            }
            return length;
        }
    }

    public override long Position
    {
        get => _os.Position + (_readPos - _readLen + _writePos);
        set
        {
            if (_writePos > 0)
            {
                FlushWrite();
            }
            _readPos = 0;
            _readLen = 0;
            _os.Position = value;
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

    // ---- Synchronous reads ----

    // Here rather than the base's, so that the span overload below inlines into it.
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
            EnsureReadable();
            if (_writePos > 0)
            {
                FlushWrite();
            }
            // Large requests, and any request on a pipe (where filling the buffer could block for data
            // the caller did not ask for), go straight to the layer below; the others fill the buffer. One
            // call for both, so that the code the JIT inlines there from one pattern's profile serves the other.
            bool direct = !_os.CanSeek || destination.Length >= _bufferSize;
            if (direct)
            {
                _readPos = 0;
                _readLen = 0;
            }
            else
            {
                EnsureBufferAllocated();
            }
            available = _os.Read(direct ? destination : _buffer.AsSpan(0, _bufferSize));
            if (direct)
            {
                return available;
            }
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
        if (copied < destination.Length && !isBlocked && _os.CanSeek)
        {
            copied += _os.Read(destination.Slice(copied));
            _readPos = 0;
            _readLen = 0;
        }
        return copied;
    }

    public override int ReadByte() => _readPos != _readLen ? _buffer![_readPos++] : ReadByteSlow();

    private int ReadByteSlow()
    {
        EnsureReadable();
        if (_writePos > 0)
        {
            FlushWrite();
        }
        EnsureBufferAllocated();
        _readLen = _os.Read(_buffer.AsSpan(0, _bufferSize));
        _readPos = 0;
        return _readLen == 0 ? -1 : _buffer![_readPos++];
    }

    // ---- Synchronous writes ----

    // Here rather than the base's, so that the span overload below inlines into it.
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
            EnsureWritable();
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
            _os.Write(source);
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
        if (_writePos == 0)
        {
            EnsureWritable();
            ClearReadBufferBeforeWrite();
            EnsureBufferAllocated();
        }
        else
        {
            EnsureNotClosed();
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
            return _os.Seek(offset, origin);
        }
        // Through the sealed type the calls below are direct ones the JIT can inline, not virtual calls; a layer
        // that cannot seek throws the NotSupportedException it always did.
        if (_os is not SeekableFileStreamStrategy os)
        {
            return _os.Seek(offset, origin);
        }

        // The layer below is ahead of this stream by the unread part of the buffer.
        if (_readLen - _readPos > 0 && origin == SeekOrigin.Current)
        {
            offset -= _readLen - _readPos;
        }
        long oldPosition = os.Position + (_readPos - _readLen);
        long newPosition = os.Seek(offset, origin);

        // A destination inside the read buffer keeps it.
        long readPos = newPosition - (oldPosition - _readPos);
        if (readPos >= 0 && readPos < _readLen)
        {
            _readPos = (int)readPos;
            os.Seek(_readLen - _readPos, SeekOrigin.Current);
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
        _os.SetLength(value);
    }

    // ---- Flushing ----

    private protected override void FlushBuffers()
    {
        if (_writePos > 0 && _os.CanWrite)
        {
            FlushWrite();
        }
        else if (_readPos < _readLen && _os.CanSeek)
        {
            // On a pipe the read-ahead cannot be given back; System.IO keeps it rather than lose it.
            FlushRead();
        }
    }

    private protected override async ValueTask FlushBuffersAsync(CancellationToken cancellationToken)
    {
        if (_writePos > 0)
        {
            await _os.WriteAsync(_buffer.AsMemory(0, _writePos), cancellationToken).ConfigureAwait(false);
            _writePos = 0;
        }
        else if (_readPos < _readLen && _os.CanSeek)
        {
            FlushRead();
        }
    }

    private void FlushWrite()
    {
        _os.Write(_buffer.AsSpan(0, _writePos));
        _writePos = 0;
    }

    /// <summary>Drops the read-ahead and moves the layer below back to this stream's position.</summary>
    private void FlushRead()
    {
        if (_readPos - _readLen != 0)
        {
            _os.Seek(_readPos - _readLen, SeekOrigin.Current);
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
        if (!_os.CanSeek)
        {
            StreamThrowHelper.ThrowCannotWriteWithUnflushableReadBuffer();
        }
        FlushRead();
    }

    // ---- Asynchronous operations ----

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
        EnsureReadable();

        if (!_os.CanSeek)
        {
            return ReadFromUnseekableAsync(buffer, cancellationToken);
        }

        SemaphoreSlim semaphore = Turns;
        Task semaphoreLockTask = semaphore.WaitAsync(cancellationToken);
        // A Dispose that ended between the checks above and this turn leaves the buffer empty: the slow path throws.
        if (semaphoreLockTask.IsCompletedSuccessfully && _writePos == 0 && !_os.IsClosed)
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
                    direct = _os.ReadAsync(buffer, cancellationToken);
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
            EnsureNotClosed(); // disposed while this call waited for its turn
            int alreadyCopied = 0;
            if (_writePos > 0)
            {
                // The asynchronous flush of seed 002: the pending bytes go out from the one buffer.
                await _os.WriteAsync(_buffer.AsMemory(0, _writePos), cancellationToken).ConfigureAwait(false);
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
                return alreadyCopied + await _os.ReadAsync(buffer, cancellationToken).ConfigureAwait(false);
            }

            // One system call refills the buffer; the caller gets what it asked for from it.
            EnsureBufferAllocated();
            _readLen = await _os.ReadAsync(_buffer.AsMemory(0, _bufferSize), cancellationToken).ConfigureAwait(false);
            int copied = Math.Min(_readLen, buffer.Length);
            _buffer.AsSpan(0, copied).CopyTo(buffer.Span);
            _readPos = copied;
            return alreadyCopied + copied;
        }
        finally
        {
            EndTurn();
        }
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<int> ReadFromUnseekableAsync(Memory<byte> destination, CancellationToken cancellationToken)
    {
        await Turns.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            EnsureNotClosed(); // disposed while this call waited for its turn
            // Never wait to fill the buffer from a pipe: the data the caller needs may be all there is.
            if (_readPos < _readLen)
            {
                int copied = Math.Min(_readLen - _readPos, destination.Length);
                _buffer.AsSpan(_readPos, copied).CopyTo(destination.Span);
                _readPos += copied;
                return copied;
            }
            return await _os.ReadAsync(destination, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            EndTurn();
        }
    }

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled(cancellationToken);
        }
        EnsureWritable();

        if (!_os.CanSeek)
        {
            return WriteToUnseekableAsync(buffer, cancellationToken);
        }

        SemaphoreSlim semaphore = Turns;
        Task semaphoreLockTask = semaphore.WaitAsync(cancellationToken);
        // As in ReadAsync: a Dispose that ended between the checks above and this turn is the slow path's to report,
        // before the bytes could land in a buffer nobody writes.
        if (semaphoreLockTask.IsCompletedSuccessfully && !_os.IsClosed)
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
        await Turns.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            EnsureNotClosed(); // disposed while this call waited for its turn
            if (_writePos > 0)
            {
                await _os.WriteAsync(_buffer.AsMemory(0, _writePos), cancellationToken).ConfigureAwait(false);
                _writePos = 0;
            }
            await _os.WriteAsync(source, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            EndTurn();
        }
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask WriteAsyncSlowPath(Task semaphoreLockTask, ReadOnlyMemory<byte> source, CancellationToken cancellationToken)
    {
        await semaphoreLockTask.ConfigureAwait(false);
        try
        {
            EnsureNotClosed(); // disposed while this call waited for its turn
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
                await _os.WriteAsync(_buffer.AsMemory(0, _writePos), cancellationToken).ConfigureAwait(false);
                _writePos = 0;
            }

            if (source.Length >= _bufferSize)
            {
                await _os.WriteAsync(source, cancellationToken).ConfigureAwait(false);
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
            EndTurn();
        }
    }

    public override void CopyTo(Stream destination, int bufferSize)
    {
        EnsureReadable();
        // Buffered bytes first, then the rest of the file straight from the layer below.
        if (!WriteReadAheadTo(destination) && _writePos > 0)
        {
            FlushWrite();
        }
        _os.CopyTo(destination, bufferSize);
    }

    /// <summary>
    /// Hands the unread part of the read buffer to <paramref name="destination"/> and empties it, as FileStream's
    /// CopyTo does first (the kernel's copy then continues from the layer below); false when there was none.
    /// </summary>
    internal bool WriteReadAheadTo(Stream destination)
    {
        if (_readPos >= _readLen)
        {
            return false;
        }
        destination.Write(_buffer.AsSpan(_readPos, _readLen - _readPos));
        _readPos = 0;
        _readLen = 0;
        return true;
    }

    public override Task CopyToAsync(Stream destination, int bufferSize, CancellationToken cancellationToken)
    {
        // Like FileStream: a closed or unreadable stream throws at once, before the write buffer is touched.
        EnsureReadable();
        return cancellationToken.IsCancellationRequested
            ? Task.FromCanceled(cancellationToken)
            : CopyToAsyncCore(destination, bufferSize, cancellationToken);
    }

    private async Task CopyToAsyncCore(Stream destination, int bufferSize, CancellationToken cancellationToken)
    {
        // Buffered bytes first, then the rest of the file straight from the layer below.
        await Turns.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            EnsureNotClosed(); // disposed while this call waited for its turn
            if (_writePos > 0)
            {
                await _os.WriteAsync(_buffer.AsMemory(0, _writePos), cancellationToken).ConfigureAwait(false);
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
            EndTurn();
        }
        await _os.CopyToAsync(destination, bufferSize, cancellationToken).ConfigureAwait(false);
    }

    // The byte-at-a-time fast paths look at these without a closed check: a disposed stream must have nothing buffered.
    private protected override void ReleaseMemory()
    {
        _writePos = 0;
        _readPos = 0;
        _readLen = 0;
    }
}
