using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Handles;
using Spindle.Interop;
using Spindle.Syscalls;

namespace Spindle.Streams;

/// <summary>
/// The buffering layer of a stream over an O_APPEND handle, in place of the ordinary one. A user write
/// that fits in the buffer is never split: when it does not fit beside what is buffered, the buffer is
/// flushed first. Each flush, and each write larger than the buffer, is one <c>write(2)</c>, which the
/// kernel places at the end of the file atomically; afterwards the position is where that write ended
/// (the descriptor's offset, which only this stream moves). Reading <see cref="Position"/> or
/// <see cref="Length"/> flushes, so that they are exact. Reads are not buffered.
/// </summary>
internal sealed class AtomicAppendFileStreamStrategy : StackedFileStreamStrategy
{
    private readonly SafeFileHandle _handle;  // the O_APPEND descriptor
    private readonly int _bufferSize;         // 0 for an unbuffered stream
    private byte[]? _buffer;                  // pending bytes; allocated on first use, as System.IO does, so a huge size cannot fail the open
    private int _start;                       // pending bytes are _buffer[_start.._count]: a failed flush keeps what the kernel did not take
    private int _count;

    internal AtomicAppendFileStreamStrategy(OSFileStreamStrategy os, SafeFileHandle handle, int bufferSize)
        : base(os)
    {
        _handle = handle;
        _bufferSize = bufferSize > 1 ? bufferSize : 0;
    }

    public override long Length
    {
        get
        {
            FlushBuffers();
            return _os.Length;
        }
    }

    public override long Position
    {
        get
        {
            FlushBuffers();
            return _os.Position;
        }
        set
        {
            FlushBuffers();
            _os.Position = value;
        }
    }

    public override long Seek(long offset, SeekOrigin origin)
    {
        FlushBuffers();
        return _os.Seek(offset, origin);
    }

    public override void SetLength(long value)
    {
        FlushBuffers();
        _os.SetLength(value);
    }

    public override int Read(Span<byte> buffer)
    {
        FlushBuffers();
        return _os.Read(buffer);
    }

    public override int ReadByte()
    {
        FlushBuffers();
        return _os.ReadByte();
    }

    public override async ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        await Turns.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            EnsureReadable(); // disposed while this call waited for its turn
            FlushBuffers();
            return await _os.ReadAsync(buffer, cancellationToken).ConfigureAwait(false);
        }
        finally
        {
            EndTurn();
        }
    }

    public override void Write(ReadOnlySpan<byte> source)
    {
        EnsureWritable();
        if (source.Length > _bufferSize - _count)
        {
            FlushBuffers();
        }
        if (source.Length >= _bufferSize)
        {
            if (source.Length > 0)
            {
                Append(source, fromBuffer: false);
            }
            return;
        }
        _buffer ??= GC.AllocateUninitializedArray<byte>(_bufferSize);
        source.CopyTo(_buffer.AsSpan(_count));
        _count += source.Length;
    }

    // Appends are single system calls into the page cache; they complete synchronously, as System.IO's
    // writes on a synchronous handle do, in their turn among the stream's asynchronous calls.
    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled(cancellationToken);
        }
        Task turn = Turns.WaitAsync(cancellationToken);
        if (!turn.IsCompletedSuccessfully)
        {
            return WriteInTurnAsync(turn, buffer);
        }
        try
        {
            Write(buffer.Span);
        }
        finally
        {
            EndTurn();
        }
        return default;
    }

    private async ValueTask WriteInTurnAsync(Task turn, ReadOnlyMemory<byte> buffer)
    {
        await turn.ConfigureAwait(false);
        try
        {
            Write(buffer.Span); // throws ObjectDisposedException if disposed while this call waited
        }
        finally
        {
            EndTurn();
        }
    }

    private protected override void FlushBuffers()
    {
        if (_count == _start)
        {
            return;
        }
        Append(_buffer.AsSpan(_start, _count - _start), fromBuffer: true);
        _start = 0;
        _count = 0;
    }

    private protected override ValueTask FlushBuffersAsync(CancellationToken cancellationToken)
    {
        FlushBuffers();
        return default;
    }

    /// <summary>
    /// One <c>write(2)</c> (more only if the kernel writes short), then the position is where it ended. Bytes from the
    /// buffer leave it as the kernel takes them, so a failure keeps exactly the bytes not written, for the next flush.
    /// </summary>
    private unsafe void Append(ReadOnlySpan<byte> data, bool fromBuffer)
    {
        fixed (byte* start = data)
        {
            byte* pointer = start;
            nuint remaining = (nuint)data.Length;
            while (remaining > 0)
            {
                nint written = Libc.Write(_handle, pointer, remaining);
                if (written < 0)
                {
                    if (Errno.Last == Errno.EINTR)
                    {
                        continue;
                    }
                    throw IoErrors.ForErrno(Errno.Last, SafeFileHandleInternals.GetPath(_handle));
                }
                SpindleMetrics.Operation(IoEngine.Sync, IoDirection.Write, written, IoMechanism.Inline);
                pointer += written;
                remaining -= (nuint)written;
                if (fromBuffer)
                {
                    _start += (int)written;
                }
            }
        }
        // The descriptor's offset is private to this open file, so it is exactly where our data ended.
        long end = Libc.LSeek(_handle, 0, LinuxConstants.SEEK_CUR);
        if (end < 0)
        {
            throw IoErrors.ForErrno(Errno.Last, SafeFileHandleInternals.GetPath(_handle));
        }
        _os.Position = end;
    }
}
