using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Engines;
using Spindle.Engines.FastPath;
using Spindle.Handles;
using Spindle.Interop;
using Spindle.Syscalls;

namespace Spindle.Streams;

/// <summary>
/// A regular file (or block device): the position lives only in memory, so <c>Seek</c> and
/// <c>Position</c> make no system call, and every read or write is one positional call
/// (<c>pread</c>/<c>pwrite</c>, or one engine operation) at that position.
/// </summary>
internal sealed class SeekableFileStreamStrategy : OSFileStreamStrategy
{
    // The stream's position; the OS offset of the descriptor is only synchronised when the handle is exposed.
    private long _filePosition;
    // Where the file ended when it was opened with FileMode.Append, or -1: nothing before it may be overwritten. Kept
    // beside the few streams that append rather than in every stream, which would make each 8 bytes larger than
    // System.IO's; only Seek and SetLength ask.
    private static readonly ConditionalWeakTable<SeekableFileStreamStrategy, StrongBox<long>> s_appendStarts = new();

    internal SeekableFileStreamStrategy(SafeFileHandle handle, FileAccess access, bool isAsync, FileIoEngine engine, long position, long appendStart,
        in OpenedFile opened)
        : base(handle, access, isAsync, engine, opened, hasPositions: true, appends: appendStart != -1)
    {
        _filePosition = position;
        if (Appends)
        {
            s_appendStarts.Add(this, new StrongBox<long>(appendStart));
        }
    }

    // Only for a stream that Appends.
    private long AppendStart => s_appendStarts.TryGetValue(this, out StrongBox<long>? start) ? start.Value : -1;

    // Asked of the kernel on every call, as FileStream does on Linux: FileShare's flock is advisory, so a
    // writer that takes no lock may change the file even when the share mode forbids writers.
    public override long Length
    {
        get
        {
            if (!Libc.FStatLayoutKnown)
            {
                return HandleIo.GetLength(_fileHandle);
            }
            if (Libc.FStatSize(_fileHandle, out long size) != 0)
            {
                throw IoErrors.ForErrno(Errno.Last, SafeFileHandleInternals.GetPath(_fileHandle));
            }
            return size;
        }
    }

    public override long Position
    {
        get => _filePosition;
        set => Seek(value, SeekOrigin.Begin);
    }

    internal override SafeFileHandle SafeFileHandle
    {
        get
        {
            // Whoever uses the descriptor directly (lseek, read, write) must see the stream's position.
            if (!_fileHandle.IsClosed && Libc.LSeek(_fileHandle, _filePosition, LinuxConstants.SEEK_SET) < 0)
            {
                throw IoErrors.ForErrno(Errno.Last, SafeFileHandleInternals.GetPath(_fileHandle));
            }
            return _fileHandle;
        }
    }

    // Small enough to inline into the buffered layer's Seek: a seek is a field write unless it needs checking.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public override long Seek(long offset, SeekOrigin origin)
    {
        long position = origin switch
        {
            SeekOrigin.Begin => offset,
            SeekOrigin.End => Length + offset,
            _ => _filePosition + offset,
        };
        if (position < 0 || Appends)
        {
            return SeekChecked(position);
        }
        _filePosition = position;
        return position;
    }

    private long SeekChecked(long position)
    {
        if (position < 0)
        {
            // What lseek reported when seeking was a system call; System.IO keeps that exception.
            throw IoErrors.ForErrno(Errno.EINVAL, SafeFileHandleInternals.GetPath(_fileHandle));
        }
        if (position < AppendStart)
        {
            StreamThrowHelper.ThrowSeekBeforeAppendStart();
        }
        _filePosition = position;
        return position;
    }

    public override void SetLength(long value)
    {
        if (Appends && value < AppendStart)
        {
            StreamThrowHelper.ThrowSetLengthBeforeAppendStart();
        }
        HandleIo.SetLength(_fileHandle, value);
        if (_filePosition > value)
        {
            _filePosition = value;
        }
    }

    public override int Read(Span<byte> buffer)
    {
        EnsureReadable();
        int read = HandleIo.Read(_fileHandle, buffer, _filePosition);
        _filePosition += read;
        return read;
    }

    public override void Write(ReadOnlySpan<byte> buffer)
    {
        EnsureWritable();
        HandleIo.Write(_fileHandle, buffer, _filePosition);
        _filePosition += buffer.Length;
    }

    // Asynchronous operations move the position when they start, by the full length, and correct it when
    // they end short or fail: operations started without awaiting the previous one get consecutive
    // offsets, as in System.IO.
    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        EnsureReadable();
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromException<int>(new OperationCanceledException(cancellationToken));
        }
        HandleFacts facts = Facts;
        int expected = buffer.Length;
        long offset = Interlocked.Add(ref _filePosition, expected) - expected;
        ValueTask<int> pending;
        try
        {
            pending = _engine.ReadAsync(_fileHandle, facts, buffer, offset, ReadFastPath.Enabled, cancellationToken);
        }
        catch
        {
            Interlocked.Add(ref _filePosition, -expected);
            throw;
        }
        if (pending.IsCompletedSuccessfully)
        {
            int read = pending.Result;
            if (read != expected)
            {
                Interlocked.Add(ref _filePosition, read - expected);
            }
            return new ValueTask<int>(read);
        }
        return CompleteReadAsync(pending, expected);
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<int> CompleteReadAsync(ValueTask<int> pending, int expected)
    {
        int read = 0;
        try
        {
            read = await pending.ConfigureAwait(false);
            return read;
        }
        finally
        {
            if (read != expected)
            {
                Interlocked.Add(ref _filePosition, read - expected);
            }
        }
    }

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        EnsureWritable();
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromException(new OperationCanceledException(cancellationToken));
        }
        HandleFacts facts = Facts;
        int length = buffer.Length;
        long offset = Interlocked.Add(ref _filePosition, length) - length;
        ValueTask pending;
        try
        {
            pending = _engine.WriteAsync(_fileHandle, facts, buffer, offset, useFastPath: true, cancellationToken);
        }
        catch
        {
            Interlocked.Add(ref _filePosition, -length);
            throw;
        }
        if (pending.IsCompletedSuccessfully)
        {
            // Consumes the result, which returns a pooled operation to its engine.
            pending.GetAwaiter().GetResult();
            return default;
        }
        return CompleteWriteAsync(pending, length);
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask CompleteWriteAsync(ValueTask pending, int length)
    {
        try
        {
            await pending.ConfigureAwait(false);
        }
        catch
        {
            Interlocked.Add(ref _filePosition, -length);
            throw;
        }
    }
}
