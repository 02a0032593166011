using Microsoft.Win32.SafeHandles;
using Spindle.Engines;
using Spindle.Engines.FastPath;
using Spindle.Handles;
using Spindle.Syscalls;

namespace Spindle.Streams;

/// <summary>
/// A pipe, socket or character device: no position, so reads and writes are plain <c>read</c>/<c>write</c>
/// (offset -1 for the engines), and <c>Seek</c>, <c>Position</c>, <c>Length</c> and <c>SetLength</c>
/// are not supported.
/// </summary>
internal sealed class UnseekableFileStreamStrategy : OSFileStreamStrategy
{
    private const long NoOffset = -1;

    internal UnseekableFileStreamStrategy(SafeFileHandle handle, FileAccess access, bool isAsync, FileIoEngine engine, in OpenedFile opened)
        : base(handle, access, isAsync, engine, opened, hasPositions: false)
    {
    }

    public override long Length => throw new NotSupportedException("Stream does not support seeking.");

    public override long Position
    {
        get => throw new NotSupportedException("Stream does not support seeking.");
        set => throw new NotSupportedException("Stream does not support seeking.");
    }

    internal override SafeFileHandle SafeFileHandle => _fileHandle;

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException("Stream does not support seeking.");

    public override void SetLength(long value) => throw new NotSupportedException("Stream does not support seeking.");

    public override int Read(Span<byte> buffer)
    {
        EnsureReadable();
        return HandleIo.Read(_fileHandle, buffer, NoOffset);
    }

    public override void Write(ReadOnlySpan<byte> buffer)
    {
        EnsureWritable();
        HandleIo.Write(_fileHandle, buffer, NoOffset);
    }

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        EnsureReadable();
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromException<int>(new OperationCanceledException(cancellationToken));
        }
        if (buffer.IsEmpty)
        {
            // read(fd, buf, 0) returns at once, as System.IO's zero-byte read does; io_uring would instead
            // wait for the pipe to become readable.
            try
            {
                return new ValueTask<int>(HandleIo.Read(_fileHandle, Span<byte>.Empty, NoOffset));
            }
            catch (Exception e)
            {
                return ValueTask.FromException<int>(e);
            }
        }
        return _engine.ReadAsync(_fileHandle, Facts, buffer, NoOffset, ReadFastPath.Enabled, cancellationToken);
    }

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        EnsureWritable();
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromException(new OperationCanceledException(cancellationToken));
        }
        return _engine.WriteAsync(_fileHandle, Facts, buffer, NoOffset, useFastPath: true, cancellationToken);
    }
}
