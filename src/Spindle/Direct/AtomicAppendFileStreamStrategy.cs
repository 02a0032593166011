using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Handles;
using Spindle.Interop;
using Spindle.RandomAccess;
using Spindle.Streams;

namespace Spindle.Direct;

/// <summary>
/// The buffering layer of a stream over an O_APPEND handle, in place of the ordinary one. A user write
/// that fits in the buffer is never split: when it does not fit beside what is buffered, the buffer is
/// flushed first. Each flush, and each write larger than the buffer, is one <c>write(2)</c>, which the
/// kernel places at the end of the file atomically; afterwards the position is where that write ended
/// (the descriptor's offset, which only this stream moves). Reading <see cref="Position"/> or
/// <see cref="Length"/> flushes, so that they are exact. Reads are not buffered.
/// </summary>
internal sealed class AtomicAppendFileStreamStrategy : FileStreamStrategy
{
    private readonly FileStreamStrategy _os;  // owns the handle; its position serves reads and Seek
    private readonly SafeFileHandle _handle;  // the O_APPEND descriptor
    private readonly int _bufferSize;         // 0 for an unbuffered stream
    private byte[]? _buffer;                  // pending bytes; allocated on first use, as System.IO does, so a huge size cannot fail the open
    private int _count;                       // bytes of _buffer waiting to be written

    internal AtomicAppendFileStreamStrategy(FileStreamStrategy os, SafeFileHandle handle, int bufferSize)
    {
        _os = os;
        _handle = handle;
        _bufferSize = bufferSize > 1 ? bufferSize : 0;
    }

    public override bool CanRead => _os.CanRead;

    public override bool CanWrite => _os.CanWrite;

    public override bool CanSeek => _os.CanSeek;

    internal override bool IsAsync => _os.IsAsync;

    internal override bool IsClosed => _os.IsClosed;

    internal override string Name => _os.Name;

    internal override IoEngine Engine => _os.Engine;

    internal override void Lock(long position, long length) => _os.Lock(position, length);

    internal override void Unlock(long position, long length) => _os.Unlock(position, length);

    internal override SafeFileHandle SafeFileHandle
    {
        get
        {
            FlushBuffer();
            return _os.SafeFileHandle;
        }
    }

    public override long Length
    {
        get
        {
            FlushBuffer();
            return _os.Length;
        }
    }

    public override long Position
    {
        get
        {
            FlushBuffer();
            return _os.Position;
        }
        set
        {
            FlushBuffer();
            _os.Position = value;
        }
    }

    public override long Seek(long offset, SeekOrigin origin)
    {
        FlushBuffer();
        return _os.Seek(offset, origin);
    }

    public override void SetLength(long value)
    {
        FlushBuffer();
        _os.SetLength(value);
    }

    internal override void Flush(bool flushToDisk)
    {
        FlushBuffer();
        _os.Flush(flushToDisk);
    }

    public override Task FlushAsync(CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return Task.FromCanceled(cancellationToken);
        }
        FlushBuffer();
        return Task.CompletedTask;
    }

    public override int Read(byte[] buffer, int offset, int count) => Read(new Span<byte>(buffer, offset, count));

    public override int Read(Span<byte> buffer)
    {
        FlushBuffer();
        return _os.Read(buffer);
    }

    public override int ReadByte()
    {
        FlushBuffer();
        return _os.ReadByte();
    }

    public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        FlushBuffer();
        return await _os.ReadAsync(buffer, cancellationToken).ConfigureAwait(false);
    }

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
        => ReadAsync(new Memory<byte>(buffer, offset, count), cancellationToken).AsTask();

    public override void Write(byte[] buffer, int offset, int count) => Write(new ReadOnlySpan<byte>(buffer, offset, count));

    public override void WriteByte(byte value) => Write(new ReadOnlySpan<byte>(in value));

    public override void Write(ReadOnlySpan<byte> source)
    {
        EnsureWritable();
        if (source.Length > _bufferSize - _count)
        {
            FlushBuffer();
        }
        if (source.Length >= _bufferSize)
        {
            if (source.Length > 0)
            {
                Append(source);
            }
            return;
        }
        _buffer ??= GC.AllocateUninitializedArray<byte>(_bufferSize);
        source.CopyTo(_buffer.AsSpan(_count));
        _count += source.Length;
    }

    // Appends are single system calls into the page cache; they complete synchronously, as System.IO's
    // writes on a synchronous handle do.
    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled(cancellationToken);
        }
        Write(buffer.Span);
        return default;
    }

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
        => WriteAsync(new ReadOnlyMemory<byte>(buffer, offset, count), cancellationToken).AsTask();

    public override IAsyncResult BeginRead(byte[] buffer, int offset, int count, AsyncCallback? callback, object? state)
        => TaskToAsyncResult.Begin(ReadAsync(buffer, offset, count, CancellationToken.None), callback, state);

    public override int EndRead(IAsyncResult asyncResult) => TaskToAsyncResult.End<int>(asyncResult);

    public override IAsyncResult BeginWrite(byte[] buffer, int offset, int count, AsyncCallback? callback, object? state)
        => TaskToAsyncResult.Begin(WriteAsync(buffer, offset, count, CancellationToken.None), callback, state);

    public override void EndWrite(IAsyncResult asyncResult) => TaskToAsyncResult.End(asyncResult);

    private void FlushBuffer()
    {
        if (_count == 0)
        {
            return;
        }
        int count = _count;
        _count = 0;
        Append(_buffer.AsSpan(0, count));
    }

    /// <summary>One <c>write(2)</c> (more only if the kernel writes short), then the position is where it ended.</summary>
    private unsafe void Append(ReadOnlySpan<byte> data)
    {
        bool added = false;
        try
        {
            _handle.DangerousAddRef(ref added);
            int fd = HandleIo.Fd(_handle);
            fixed (byte* start = data)
            {
                byte* pointer = start;
                nuint remaining = (nuint)data.Length;
                while (remaining > 0)
                {
                    nint written = Libc.Write(fd, pointer, remaining);
                    if (written < 0)
                    {
                        if (Errno.Last == Errno.EINTR)
                        {
                            continue;
                        }
                        throw IoErrors.ForErrno(Errno.Last, SafeFileHandleInternals.GetPath(_handle));
                    }
                    SpindleMetrics.Operation(IoEngine.Sync, IoDirection.Write, written);
                    pointer += written;
                    remaining -= (nuint)written;
                }
            }
            // The descriptor's offset is private to this open file, so it is exactly where our data ended.
            long end = Libc.LSeek(fd, 0, LinuxConstants.SEEK_CUR);
            if (end < 0)
            {
                throw IoErrors.ForErrno(Errno.Last, SafeFileHandleInternals.GetPath(_handle));
            }
            _os.Position = end;
        }
        finally
        {
            if (added)
            {
                _handle.DangerousRelease();
            }
        }
    }

    private void EnsureWritable()
    {
        if (_os.IsClosed)
        {
            ThrowHelper.ThrowFileClosed();
        }
        if (!_os.CanWrite)
        {
            StreamThrowHelper.ThrowUnwritable();
        }
    }

    protected override void Dispose(bool disposing)
    {
        if (_os.IsClosed)
        {
            return;
        }
        try
        {
            FlushBuffer();
        }
        catch (Exception e) when (!disposing && e is IOException or UnauthorizedAccessException or NotSupportedException)
        {
            // A finalizer cannot report a failed flush; System.IO drops it too.
        }
        finally
        {
            _os.DisposeInternal(disposing);
        }
    }

    public override ValueTask DisposeAsync()
    {
        Dispose(disposing: true);
        return default;
    }
}
