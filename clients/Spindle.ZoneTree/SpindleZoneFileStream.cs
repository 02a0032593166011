using ZoneTree.AbstractFileStream;

namespace Spindle.ZoneTree;

/// <summary>
/// A ZoneTree file (write-ahead log, disk segment, metadata) on a <see cref="SpindleFileStream"/>:
/// ZoneTree's <c>LocalFileStream</c> with Spindle's stream in place of <see cref="FileStream"/>.
/// </summary>
/// <remarks>
/// A wrapper rather than a subclass of <see cref="SpindleFileStream"/>: a derived stream type routes every
/// call through its overrides (as a derived <see cref="FileStream"/> does), which would cost the fast paths.
/// </remarks>
public sealed class SpindleZoneFileStream : Stream, IFileStream
{
    private readonly SpindleFileStream _stream; // owns the file; every member forwards to it

    /// <summary>Opens <paramref name="path"/> the way ZoneTree asks, with <paramref name="options"/>' engine.</summary>
    /// <param name="path">The file.</param>
    /// <param name="options">Mode, access, share, buffer size and options as ZoneTree passes them, plus Spindle's engine.</param>
    /// <exception cref="IOException">The file cannot be opened (the exceptions of <see cref="FileStream"/>'s constructor).</exception>
    public SpindleZoneFileStream(string path, SpindleFileOptions options)
    {
        FilePath = path;
        _stream = new SpindleFileStream(path, options);
    }

    /// <inheritdoc/>
    public string FilePath { get; }

    /// <summary>The engine the stream's asynchronous calls run on.</summary>
    public IoEngine Engine => _stream.Engine;

    /// <inheritdoc/>
    public override bool CanRead => _stream.CanRead;

    /// <inheritdoc/>
    public override bool CanSeek => _stream.CanSeek;

    /// <inheritdoc/>
    public override bool CanWrite => _stream.CanWrite;

    /// <inheritdoc/>
    public override bool CanTimeout => _stream.CanTimeout;

    /// <inheritdoc/>
    public override long Length => _stream.Length;

    /// <inheritdoc/>
    public override long Position
    {
        get => _stream.Position;
        set => _stream.Position = value;
    }

    /// <inheritdoc/>
    public override int ReadTimeout
    {
        get => _stream.ReadTimeout;
        set => _stream.ReadTimeout = value;
    }

    /// <inheritdoc/>
    public override int WriteTimeout
    {
        get => _stream.WriteTimeout;
        set => _stream.WriteTimeout = value;
    }

    /// <inheritdoc/>
    public override void Flush() => _stream.Flush();

    /// <inheritdoc/>
    public void Flush(bool flushToDisk) => _stream.Flush(flushToDisk);

    /// <inheritdoc/>
    public override Task FlushAsync(CancellationToken cancellationToken) => _stream.FlushAsync(cancellationToken);

    /// <inheritdoc/>
    public override int Read(byte[] buffer, int offset, int count) => _stream.Read(buffer, offset, count);

    /// <inheritdoc/>
    public override int Read(Span<byte> buffer) => _stream.Read(buffer);

    /// <inheritdoc/>
    /// <remarks>Reads exactly <paramref name="count"/> bytes, as ZoneTree's own stream does.</remarks>
    /// <exception cref="EndOfStreamException">The file ends first.</exception>
    public int ReadFaster(byte[] buffer, int offset, int count)
    {
        _stream.ReadExactly(buffer, offset, count);
        return count;
    }

    /// <inheritdoc/>
    public override int ReadByte() => _stream.ReadByte();

    /// <inheritdoc/>
    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
        => _stream.ReadAsync(buffer, offset, count, cancellationToken);

    /// <inheritdoc/>
    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
        => _stream.ReadAsync(buffer, cancellationToken);

    /// <inheritdoc/>
    public override IAsyncResult BeginRead(byte[] buffer, int offset, int count, AsyncCallback? callback, object? state)
        => _stream.BeginRead(buffer, offset, count, callback, state);

    /// <inheritdoc/>
    public override int EndRead(IAsyncResult asyncResult) => _stream.EndRead(asyncResult);

    /// <inheritdoc/>
    public override void Write(byte[] buffer, int offset, int count) => _stream.Write(buffer, offset, count);

    /// <inheritdoc/>
    public override void Write(ReadOnlySpan<byte> buffer) => _stream.Write(buffer);

    /// <inheritdoc/>
    public override void WriteByte(byte value) => _stream.WriteByte(value);

    /// <inheritdoc/>
    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
        => _stream.WriteAsync(buffer, offset, count, cancellationToken);

    /// <inheritdoc/>
    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
        => _stream.WriteAsync(buffer, cancellationToken);

    /// <inheritdoc/>
    public override IAsyncResult BeginWrite(byte[] buffer, int offset, int count, AsyncCallback? callback, object? state)
        => _stream.BeginWrite(buffer, offset, count, callback, state);

    /// <inheritdoc/>
    public override void EndWrite(IAsyncResult asyncResult) => _stream.EndWrite(asyncResult);

    /// <inheritdoc/>
    public override long Seek(long offset, SeekOrigin origin) => _stream.Seek(offset, origin);

    /// <inheritdoc/>
    public override void SetLength(long value) => _stream.SetLength(value);

    /// <inheritdoc/>
    public override void CopyTo(Stream destination, int bufferSize) => _stream.CopyTo(destination, bufferSize);

    /// <inheritdoc/>
    public override Task CopyToAsync(Stream destination, int bufferSize, CancellationToken cancellationToken)
        => _stream.CopyToAsync(destination, bufferSize, cancellationToken);

    /// <inheritdoc/>
    public Stream ToStream() => this;

    /// <inheritdoc/>
    public override ValueTask DisposeAsync() => _stream.DisposeAsync();

    /// <inheritdoc/>
    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            _stream.Dispose();
        }
        base.Dispose(disposing);
    }
}
