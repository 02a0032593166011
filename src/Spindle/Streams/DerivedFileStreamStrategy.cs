using Microsoft.Win32.SafeHandles;

namespace Spindle.Streams;

/// <summary>
/// Used when the stream is a type derived from <see cref="SpindleFileStream"/>: span, memory, byte and
/// APM calls go through <see cref="Stream"/>'s own implementations, which call the array overloads, so
/// that a subclass overriding only <c>Read(byte[], int, int)</c> sees every read. The array overloads
/// reach the real strategy.
/// </summary>
internal sealed class DerivedFileStreamStrategy : FileStreamStrategy
{
    // The stream whose overrides must be honoured.
    private readonly SpindleFileStream _fileStream;
    // The real strategy (buffered or OS) that does the work.
    private readonly FileStreamStrategy _strategy;

    internal DerivedFileStreamStrategy(SpindleFileStream fileStream, FileStreamStrategy strategy)
    {
        _fileStream = fileStream;
        _strategy = strategy;
    }

    internal override bool IsDerived => true;

    // A derived type may rely on Dispose(false) being called, as it always was for FileStream.
    internal override bool RequiresFinalizer => true;

    public override bool CanRead => _strategy.CanRead;

    public override bool CanWrite => _strategy.CanWrite;

    public override bool CanSeek => _strategy.CanSeek;

    public override long Length => _strategy.Length;

    public override long Position
    {
        get => _strategy.Position;
        set => _strategy.Position = value;
    }

    internal override bool IsAsync => _strategy.IsAsync;

    internal override string Name => _strategy.Name;

    // As FileStream: through the derived type's Flush(bool) override, which also throws once the stream is disposed.
    internal override SafeFileHandle SafeFileHandle
    {
        get
        {
            _fileStream.Flush(flushToDisk: false);
            return _strategy.SafeFileHandle;
        }
    }

    internal override bool IsClosed => _strategy.IsClosed;

    internal override IoEngine Engine => _strategy.Engine;

    internal override void Flush(bool flushToDisk) => _strategy.Flush(flushToDisk);

    internal override void Lock(long position, long length) => _strategy.Lock(position, length);

    internal override void Unlock(long position, long length) => _strategy.Unlock(position, length);

    public override long Seek(long offset, SeekOrigin origin) => _strategy.Seek(offset, origin);

    public override void SetLength(long value) => _strategy.SetLength(value);

    public override int Read(byte[] buffer, int offset, int count) => _strategy.Read(buffer, offset, count);

    public override int Read(Span<byte> buffer) => _fileStream.BaseRead(buffer);

    public override int ReadByte() => _fileStream.BaseReadByte();

    public override void Write(byte[] buffer, int offset, int count) => _strategy.Write(buffer, offset, count);

    public override void Write(ReadOnlySpan<byte> buffer) => _fileStream.BaseWrite(buffer);

    public override void WriteByte(byte value) => _fileStream.BaseWriteByte(value);

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
        => _strategy.ReadAsync(buffer, offset, count, cancellationToken);

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
        => _fileStream.BaseReadAsync(buffer, cancellationToken);

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
        => _strategy.WriteAsync(buffer, offset, count, cancellationToken);

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
        => _fileStream.BaseWriteAsync(buffer, cancellationToken);

    public override IAsyncResult BeginRead(byte[] buffer, int offset, int count, AsyncCallback? callback, object? state)
        => _fileStream.BaseBeginRead(buffer, offset, count, callback, state);

    public override int EndRead(IAsyncResult asyncResult) => _fileStream.BaseEndRead(asyncResult);

    public override IAsyncResult BeginWrite(byte[] buffer, int offset, int count, AsyncCallback? callback, object? state)
        => _fileStream.BaseBeginWrite(buffer, offset, count, callback, state);

    public override void EndWrite(IAsyncResult asyncResult) => _fileStream.BaseEndWrite(asyncResult);

    public override Task FlushAsync(CancellationToken cancellationToken) => _strategy.FlushAsync(cancellationToken);

    public override void CopyTo(Stream destination, int bufferSize) => _fileStream.BaseCopyTo(destination, bufferSize);

    public override Task CopyToAsync(Stream destination, int bufferSize, CancellationToken cancellationToken)
        => _fileStream.BaseCopyToAsync(destination, bufferSize, cancellationToken);

    public override ValueTask DisposeAsync() => _fileStream.BaseDisposeAsync();

    protected override void Dispose(bool disposing) => _strategy.DisposeInternal(disposing);
}
