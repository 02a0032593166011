using Microsoft.Win32.SafeHandles;

namespace Spindle.Tests.Infrastructure;

/// <summary>
/// The synchronous random-access members behind one interface, so that a differential test can run
/// the same script on System.IO (<see cref="SystemIo"/>) and on Spindle (<see cref="Spindle"/>).
/// </summary>
public abstract class RandomAccessApi
{
    public static readonly RandomAccessApi SystemIo = new SystemIoApi();
    public static readonly RandomAccessApi Spindle = new SpindleApi();

    public abstract string Name { get; }

    /// <summary>Opens a handle with this library's opener.</summary>
    public abstract SafeFileHandle Open(string path, FileMode mode, FileAccess access, FileShare share = FileShare.Read, FileOptions options = FileOptions.None);

    public abstract int Read(SafeFileHandle handle, Span<byte> buffer, long fileOffset);
    public abstract long Read(SafeFileHandle handle, IReadOnlyList<Memory<byte>> buffers, long fileOffset);
    public abstract void Write(SafeFileHandle handle, ReadOnlySpan<byte> buffer, long fileOffset);
    public abstract void Write(SafeFileHandle handle, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset);
    public abstract long GetLength(SafeFileHandle handle);
    public abstract void SetLength(SafeFileHandle handle, long length);
    public abstract void FlushToDisk(SafeFileHandle handle);

    public override string ToString() => Name;

    private sealed class SystemIoApi : RandomAccessApi
    {
        public override string Name => "System.IO";
        public override SafeFileHandle Open(string path, FileMode mode, FileAccess access, FileShare share, FileOptions options) =>
            File.OpenHandle(path, mode, access, share, options);
        public override int Read(SafeFileHandle handle, Span<byte> buffer, long fileOffset) => System.IO.RandomAccess.Read(handle, buffer, fileOffset);
        public override long Read(SafeFileHandle handle, IReadOnlyList<Memory<byte>> buffers, long fileOffset) => System.IO.RandomAccess.Read(handle, buffers, fileOffset);
        public override void Write(SafeFileHandle handle, ReadOnlySpan<byte> buffer, long fileOffset) => System.IO.RandomAccess.Write(handle, buffer, fileOffset);
        public override void Write(SafeFileHandle handle, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset) => System.IO.RandomAccess.Write(handle, buffers, fileOffset);
        public override long GetLength(SafeFileHandle handle) => System.IO.RandomAccess.GetLength(handle);
        public override void SetLength(SafeFileHandle handle, long length) => System.IO.RandomAccess.SetLength(handle, length);
        public override void FlushToDisk(SafeFileHandle handle) => System.IO.RandomAccess.FlushToDisk(handle);
    }

    private sealed class SpindleApi : RandomAccessApi
    {
        public override string Name => "Spindle";
        public override SafeFileHandle Open(string path, FileMode mode, FileAccess access, FileShare share, FileOptions options) =>
            SpindleFile.OpenHandle(path, mode, access, share, options);
        public override int Read(SafeFileHandle handle, Span<byte> buffer, long fileOffset) => SpindleRandomAccess.Read(handle, buffer, fileOffset);
        public override long Read(SafeFileHandle handle, IReadOnlyList<Memory<byte>> buffers, long fileOffset) => SpindleRandomAccess.Read(handle, buffers, fileOffset);
        public override void Write(SafeFileHandle handle, ReadOnlySpan<byte> buffer, long fileOffset) => SpindleRandomAccess.Write(handle, buffer, fileOffset);
        public override void Write(SafeFileHandle handle, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset) => SpindleRandomAccess.Write(handle, buffers, fileOffset);
        public override long GetLength(SafeFileHandle handle) => SpindleRandomAccess.GetLength(handle);
        public override void SetLength(SafeFileHandle handle, long length) => SpindleRandomAccess.SetLength(handle, length);
        public override void FlushToDisk(SafeFileHandle handle) => SpindleRandomAccess.FlushToDisk(handle);
    }
}
