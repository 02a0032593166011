using Microsoft.Win32.SafeHandles;
using Spindle.Portable;

namespace Spindle.Streams;

/// <summary>
/// The strategy of a <see cref="SpindleFileStream"/> in pass-through mode: a <see cref="FileStream"/> does
/// the work, so position, buffering, append protection, locking and finalization are System.IO's own.
/// </summary>
internal sealed class PassThroughFileStreamStrategy : FileStreamStrategy
{
    private readonly FileStream _stream;
    private readonly IoEngine _engine;

    private PassThroughFileStreamStrategy(FileStream stream, IoEngine engine)
    {
        _stream = stream;
        _engine = engine;
    }

    /// <summary>Opens the file as <see cref="FileStream"/> would with the same options.</summary>
    internal static FileStreamStrategy Open(SpindleFileStream owner, string path, SpindleFileOptions options)
    {
        FileStreamOptions systemOptions = PassThroughFile.ToFileStreamOptions(options, options.BufferSize);
        return ForOwner(owner, new PassThroughFileStreamStrategy(new FileStream(path, systemOptions), PassThrough.Engine(options.Engine)));
    }

    /// <summary>Opens the file as <see cref="FileStream"/>'s constructor with the same arguments does.</summary>
    internal static FileStreamStrategy Open(SpindleFileStream owner, string path, FileMode mode, FileAccess access, FileShare share, int bufferSize, FileOptions options)
        => ForOwner(owner, new PassThroughFileStreamStrategy(new FileStream(path, mode, access, share, bufferSize, options), IoEngine.ThreadPool));

    /// <summary>Wraps an open handle as <see cref="FileStream"/>'s handle constructor does.</summary>
    internal static FileStreamStrategy Wrap(SpindleFileStream owner, SafeFileHandle handle, FileAccess access, int bufferSize, bool isAsync)
        => ForOwner(owner, new PassThroughFileStreamStrategy(new FileStream(handle, access, bufferSize, isAsync), IoEngine.ThreadPool));

    // A derived stream's overrides must see every call, as with the Linux strategies.
    private static FileStreamStrategy ForOwner(SpindleFileStream owner, FileStreamStrategy strategy)
        => owner.GetType() == typeof(SpindleFileStream) ? strategy : new DerivedFileStreamStrategy(owner, strategy);

    internal override bool IsAsync => _stream.IsAsync;

    internal override string Name => _stream.Name;

    internal override SafeFileHandle SafeFileHandle => _stream.SafeFileHandle;

    // A FileStream can neither read nor write once closed (its access always allows one of them).
    internal override bool IsClosed => !_stream.CanRead && !_stream.CanWrite;

    internal override IoEngine Engine => _engine;

    public override bool CanRead => _stream.CanRead;

    public override bool CanWrite => _stream.CanWrite;

    public override bool CanSeek => _stream.CanSeek;

    public override long Length => _stream.Length;

    public override long Position
    {
        get => _stream.Position;
        set => _stream.Position = value;
    }

    internal override void Flush(bool flushToDisk) => _stream.Flush(flushToDisk);

    public override Task FlushAsync(CancellationToken cancellationToken) => _stream.FlushAsync(cancellationToken);

    internal override void Lock(long position, long length)
    {
        if (!HasLocks)
        {
            throw NoLocks();
        }
        _stream.Lock(position, length);
    }

    internal override void Unlock(long position, long length)
    {
        if (!HasLocks)
        {
            throw NoLocks();
        }
        _stream.Unlock(position, length);
    }

    // Where FileStream has no byte-range locks (it would throw the same exception).
    [System.Runtime.Versioning.UnsupportedOSPlatformGuard("macos")]
    [System.Runtime.Versioning.UnsupportedOSPlatformGuard("ios")]
    [System.Runtime.Versioning.UnsupportedOSPlatformGuard("tvos")]
    [System.Runtime.Versioning.UnsupportedOSPlatformGuard("freebsd")]
    private static bool HasLocks => !(OperatingSystem.IsMacOS() || OperatingSystem.IsIOS() || OperatingSystem.IsTvOS() || OperatingSystem.IsFreeBSD());

    private static PlatformNotSupportedException NoLocks() => new("File locking is not supported on this platform, as in System.IO.");

    public override long Seek(long offset, SeekOrigin origin) => _stream.Seek(offset, origin);

    public override void SetLength(long value) => _stream.SetLength(value);

    public override int Read(byte[] buffer, int offset, int count) => _stream.Read(buffer, offset, count);

    public override int Read(Span<byte> buffer) => _stream.Read(buffer);

    public override int ReadByte() => _stream.ReadByte();

    public override void Write(byte[] buffer, int offset, int count) => _stream.Write(buffer, offset, count);

    public override void Write(ReadOnlySpan<byte> buffer) => _stream.Write(buffer);

    public override void WriteByte(byte value) => _stream.WriteByte(value);

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
        => _stream.ReadAsync(buffer, offset, count, cancellationToken);

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
        => _stream.ReadAsync(buffer, cancellationToken);

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
        => _stream.WriteAsync(buffer, offset, count, cancellationToken);

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
        => _stream.WriteAsync(buffer, cancellationToken);

    public override IAsyncResult BeginRead(byte[] buffer, int offset, int count, AsyncCallback? callback, object? state)
        => _stream.BeginRead(buffer, offset, count, callback, state);

    public override int EndRead(IAsyncResult asyncResult) => _stream.EndRead(asyncResult);

    public override IAsyncResult BeginWrite(byte[] buffer, int offset, int count, AsyncCallback? callback, object? state)
        => _stream.BeginWrite(buffer, offset, count, callback, state);

    public override void EndWrite(IAsyncResult asyncResult) => _stream.EndWrite(asyncResult);

    public override void CopyTo(Stream destination, int bufferSize) => _stream.CopyTo(destination, bufferSize);

    public override Task CopyToAsync(Stream destination, int bufferSize, CancellationToken cancellationToken)
        => _stream.CopyToAsync(destination, bufferSize, cancellationToken);

    public override ValueTask DisposeAsync() => _stream.DisposeAsync();

    protected override void Dispose(bool disposing)
    {
        // From a finalizer the FileStream finalizes itself (and flushes its buffer); only an explicit dispose closes it.
        if (disposing)
        {
            _stream.Dispose();
        }
    }
}
