using System.Buffers;
using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Engines.FastPath;
using Spindle.Handles;
using Spindle.Interop;
using Spindle.Syscalls;

namespace Spindle.Files;

/// <summary>
/// Whole-file reads and writes on a handle Spindle opened, for the <see cref="File"/> content twins: the length
/// from one <c>fstat</c>, the bytes read straight into the caller's array, and a file whose length is unknown
/// (0 from procfs, or a pipe) read to its end through a pooled buffer that doubles, as System.IO does.
/// </summary>
internal static class FileContent
{
    /// <summary>
    /// Files up to this length are read whole into one pooled buffer and decoded at once; longer ones are read
    /// through a <see cref="StreamReader"/>, so that a large file does not hold its bytes and its characters twice.
    /// </summary>
    internal const int MaxWholeTextLength = 16 << 20;

    /// <summary>The first pooled buffer for a file of unknown length (procfs files are mostly smaller).</summary>
    private const int UnknownLengthStart = 4096;

    internal const string EndOfFileMessage = "Unable to read beyond the end of the stream.";

    internal const string TooLongMessage =
        "The file is too long. This operation is currently limited to supporting files less than 2 gigabytes in size.";

    /// <summary>System.IO's open for its content reads: read access, others may read, no access hint (an extra system call on Linux).</summary>
    internal static SafeFileHandle OpenRead(string path, bool isAsync)
        => Open(path, FileMode.Open, FileAccess.Read, isAsync ? FileOptions.Asynchronous : FileOptions.None, preallocationSize: 0, out _);

    /// <summary>Spindle's open (as <see cref="SpindleFile.OpenHandle(string, FileMode, FileAccess, FileShare, FileOptions, long)"/>), with others allowed to read, saying what it learned.</summary>
    private static SafeFileHandle Open(string path, FileMode mode, FileAccess access, FileOptions options, long preallocationSize, out OpenedFile opened)
        => FileOpener.Open(path, mode, access, FileShare.Read, options, preallocationSize, unixCreateMode: null, SpindleOpenFlags.For(options), out opened);

    /// <summary>
    /// The asynchronous content methods' open (<see cref="SpindleFile.OpenHandleAsync(string, FileMode, FileAccess, FileShare, FileOptions, long, CancellationToken)"/>
    /// on the default engine: on the ring where io_uring runs), for reading, others allowed to read.
    /// </summary>
    internal static ValueTask<OpenedHandle> OpenReadAsync(string path, CancellationToken cancellationToken)
        => SpindleFile.OpenAsync(path, FileMode.Open, FileAccess.Read, FileOptions.Asynchronous, preallocationSize: 0, cancellationToken);

    /// <summary>As <see cref="OpenReadAsync"/>, for writing; <see cref="WritesInline"/> tells from the result whether small writes are done inline.</summary>
    internal static ValueTask<OpenedHandle> OpenWriteAsync(string path, FileMode mode, long preallocationSize, CancellationToken cancellationToken)
        => SpindleFile.OpenAsync(path, mode, FileAccess.Write, FileOptions.Asynchronous, preallocationSize, cancellationToken);

    /// <summary>
    /// Whether a small write can be done on the caller's thread (the engines' inline-write rule: a local file system
    /// whose buffered writes are page-cache copies, not O_DSYNC).
    /// </summary>
    internal static bool WritesInline(in OpenedFile opened)
        => WriteFastPath.Enabled && opened.WritesAreCopies == true && (opened.Flags & OpenedFile.OpenDsyncFlag) == 0;

    /// <summary>
    /// Reads what the page cache holds at <paramref name="offset"/> on the caller's thread
    /// (<c>preadv2(RWF_NOWAIT)</c>), as the engines' fast path does, but without learning the facts of a handle that
    /// lives for one call: the bytes read, or -1 when the engine must read (nothing cached, or any error, which the
    /// engine then reports as System.IO does). On a memory file system (tmpfs, ramfs), which refuses the flag and
    /// whose reads are copies anyway, a plain read (the router's row 3).
    /// </summary>
    internal static unsafe int TryReadCached(in OpenedHandle opened, Span<byte> buffer, long offset)
    {
        SafeFileHandle handle = opened.Handle;
        if (!ReadFastPath.Enabled || buffer.IsEmpty || opened.Opened.FileSystem == FileSystemKind.OtherBlocking)
        {
            return -1; // nothing to try (FUSE, overlayfs: the flag fails)
        }
        fixed (byte* pointer = buffer)
        {
            int flags = opened.Opened.FileSystem == FileSystemKind.Memory ? 0 : LinuxConstants.RWF_NOWAIT;
            nint read = Libc.PReadV2(handle, pointer, (nuint)buffer.Length, offset, flags);
            if (read < 0 && flags != 0 && Errno.Last == Errno.EOPNOTSUPP && opened.Opened.FileSystem == FileSystemKind.Unknown
                && LocalFileSystems.Ask(handle, readable: true) == FileSystemKind.Memory)
            {
                // A file on an anonymous device the open did not ask about, which is tmpfs after all: a plain read is the copy.
                read = Libc.PReadV2(handle, pointer, (nuint)buffer.Length, offset, 0);
            }
            if (read < 0)
            {
                return -1;
            }
            SpindleMetrics.FastPathHit();
            SpindleMetrics.Operation(SpindleRandomAccess.DefaultEngine, IoDirection.Read, read, IoMechanism.FastPath);
            return (int)read;
        }
    }

    /// <summary>
    /// Opens for writing; <paramref name="inline"/> says whether a small write can be done on the caller's thread
    /// (the engines' inline-write rule: a local file system whose buffered writes are page-cache copies).
    /// </summary>
    internal static SafeFileHandle OpenWrite(string path, FileMode mode, FileOptions options, long preallocationSize, out bool inline)
    {
        SafeFileHandle handle = Open(path, mode, FileAccess.Write, options, preallocationSize, out OpenedFile opened);
        inline = WritesInline(opened);
        return handle;
    }

    /// <summary>
    /// Before I/O that is not a read of the page cache: sets the status flags a content call's open left O_NONBLOCK on
    /// in place of (<see cref="OpenedHandle.PendingStatusFlags"/>; the engines' reads must be able to wait), and hands the
    /// engines what the open learned about the file (<see cref="HandleFacts"/>), so that they do not ask the kernel again.
    /// </summary>
    internal static void PrepareForEngine(in OpenedHandle opened)
    {
        if (opened.PendingStatusFlags >= 0)
        {
            _ = Libc.Fcntl(opened.Handle, LinuxConstants.F_SETFL, opened.PendingStatusFlags);
        }
        _ = HandleFacts.Of(opened.Handle, opened.Opened);
    }

    /// <summary>The file's length: what the open learned, else <see cref="LengthOf(SafeFileHandle)"/>.</summary>
    internal static long LengthOf(in OpenedHandle opened) => opened.Length >= 0 ? opened.Length : LengthOf(opened.Handle);

    /// <summary>Whether a write of <paramref name="length"/> bytes is small enough to do inline.</summary>
    internal static bool IsInline(bool inline, int length) => inline && length <= WriteFastPath.MaxInlineBytes;

    /// <summary>The length <c>fstat</c> reports, or 0 for a handle without positions, which is then read to its end.</summary>
    internal static long LengthOf(SafeFileHandle handle)
        => SafeFileHandleInternals.CanSeek(handle) ? HandleIo.GetLength(handle) : 0;

    /// <summary>Reads until <paramref name="buffer"/> is full or the file ends; the number of bytes read.</summary>
    internal static int Fill(SafeFileHandle handle, Span<byte> buffer)
    {
        int total = 0;
        while (total < buffer.Length)
        {
            int read = SpindleRandomAccess.Read(handle, buffer.Slice(total), total);
            if (read == 0)
            {
                break;
            }
            total += read;
        }
        return total;
    }

    /// <summary>As <see cref="Fill"/>, asynchronously on the default engine, starting at <paramref name="filled"/>.</summary>
    internal static async ValueTask<int> FillAsync(SafeFileHandle handle, Memory<byte> buffer, int filled, CancellationToken cancellationToken)
    {
        while (filled < buffer.Length)
        {
            int read = await SpindleRandomAccess.ReadAsync(handle, buffer.Slice(filled), filled, cancellationToken).ConfigureAwait(false);
            if (read == 0)
            {
                break;
            }
            filled += read;
        }
        return filled;
    }

    /// <summary>
    /// Reads a file of unknown length to its end into a pooled buffer that the caller returns to
    /// <see cref="ArrayPool{T}.Shared"/>; <paramref name="count"/> is the number of bytes in it.
    /// </summary>
    internal static byte[] ReadToEndPooled(SafeFileHandle handle, out int count)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(UnknownLengthStart);
        int total = 0;
        try
        {
            while (true)
            {
                if (total == buffer.Length)
                {
                    buffer = Grow(buffer, total);
                }
                int read = SpindleRandomAccess.Read(handle, buffer.AsSpan(total), total);
                if (read == 0)
                {
                    count = total;
                    return buffer;
                }
                total += read;
            }
        }
        catch
        {
            ArrayPool<byte>.Shared.Return(buffer);
            throw;
        }
    }

    /// <summary>As <see cref="ReadToEndPooled"/>, asynchronously; the result's length is the number of bytes.</summary>
    internal static async ValueTask<(byte[] Buffer, int Count)> ReadToEndPooledAsync(SafeFileHandle handle, CancellationToken cancellationToken)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(UnknownLengthStart);
        int total = 0;
        try
        {
            while (true)
            {
                if (total == buffer.Length)
                {
                    buffer = Grow(buffer, total);
                }
                int read = await SpindleRandomAccess.ReadAsync(handle, buffer.AsMemory(total), total, cancellationToken).ConfigureAwait(false);
                if (read == 0)
                {
                    return (buffer, total);
                }
                total += read;
            }
        }
        catch
        {
            ArrayPool<byte>.Shared.Return(buffer);
            throw;
        }
    }

    /// <summary>A pooled buffer twice as large holding the first <paramref name="used"/> bytes; the old one goes back to the pool.</summary>
    private static byte[] Grow(byte[] buffer, int used)
    {
        uint length = (uint)buffer.Length * 2;
        if (length > Array.MaxLength)
        {
            // One more byte than the largest array: the rent fails as System.IO's does for a file that never ends.
            length = (uint)Math.Max(Array.MaxLength, buffer.Length + 1);
        }
        byte[] larger = ArrayPool<byte>.Shared.Rent((int)length);
        buffer.AsSpan(0, used).CopyTo(larger);
        ArrayPool<byte>.Shared.Return(buffer);
        return larger;
    }

    /// <summary>Writes all of <paramref name="bytes"/> at <paramref name="offset"/> (one system call for a regular file).</summary>
    internal static void Write(SafeFileHandle handle, ReadOnlySpan<byte> bytes, long offset)
    {
        if (!bytes.IsEmpty)
        {
            SpindleRandomAccess.Write(handle, bytes, offset);
        }
    }

    /// <summary>Where an append starts: the file's end, or 0 for a handle without positions.</summary>
    internal static long AppendOffset(SafeFileHandle handle)
        => SafeFileHandleInternals.CanSeek(handle) ? SpindleRandomAccess.GetLength(handle) : 0;

    /// <summary>
    /// A task for an exception thrown before the first await, as an <c>async</c> method would make it: cancelled
    /// for a cancellation, faulted otherwise.
    /// </summary>
    internal static Task FromException(Exception exception)
        => exception is OperationCanceledException canceled && canceled.CancellationToken.IsCancellationRequested
            ? Task.FromCanceled(canceled.CancellationToken)
            : Task.FromException(exception);

    /// <inheritdoc cref="FromException(Exception)"/>
    internal static Task<T> FromException<T>(Exception exception)
        => exception is OperationCanceledException canceled && canceled.CancellationToken.IsCancellationRequested
            ? Task.FromCanceled<T>(canceled.CancellationToken)
            : Task.FromException<T>(exception);
}
