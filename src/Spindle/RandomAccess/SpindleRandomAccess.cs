using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Engines;
using Spindle.Engines.FastPath;
using Spindle.Handles;
using Spindle.Syscalls;

namespace Spindle;

/// <summary>
/// Thread-safe, offset-based file I/O: the members of <see cref="System.IO.RandomAccess"/>, on any
/// <see cref="SafeFileHandle"/> (Spindle's or System.IO's). No file position is used or changed.
/// </summary>
/// <remarks>
/// On handles without positions (pipes, sockets, character devices) reads and writes ignore the
/// offset, which must still not be negative; this is the behaviour of .NET 11, where .NET 10 throws
/// <see cref="NotSupportedException"/>.
/// </remarks>
public static partial class SpindleRandomAccess
{
    /// <summary>Gets the length of the file in bytes.</summary>
    /// <param name="handle">The file handle.</param>
    /// <returns>The file's length.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="handle"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="handle"/> is invalid.</exception>
    /// <exception cref="ObjectDisposedException">The handle is closed.</exception>
    /// <exception cref="NotSupportedException">The handle does not support seeking (pipe, socket).</exception>
    public static long GetLength(SafeFileHandle handle)
    {
        if (Portable.PassThrough.Enabled)
        {
            return System.IO.RandomAccess.GetLength(handle);
        }
        ValidateSeekableInput(handle);
        return HandleIo.GetLength(handle);
    }

    /// <summary>Sets the length of the file; growing fills with zeros, shrinking discards the tail.</summary>
    /// <param name="handle">The file handle, opened with write access.</param>
    /// <param name="length">The new length.</param>
    /// <exception cref="ArgumentNullException"><paramref name="handle"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="handle"/> is invalid.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is negative or too large for the file system.</exception>
    /// <exception cref="ObjectDisposedException">The handle is closed.</exception>
    /// <exception cref="NotSupportedException">The handle does not support seeking.</exception>
    /// <exception cref="UnauthorizedAccessException">The handle was not opened for writing.</exception>
    public static void SetLength(SafeFileHandle handle, long length)
    {
        if (Portable.PassThrough.Enabled)
        {
            System.IO.RandomAccess.SetLength(handle, length);
            return;
        }
        ValidateSeekableInput(handle);
        if (length < 0)
        {
            ThrowHelper.ThrowNeedNonNegative(nameof(length));
        }
        HandleIo.SetLength(handle, length);
    }

    /// <summary>Flushes the file's data and metadata from the OS caches to the storage device (<c>fsync</c>).</summary>
    /// <param name="handle">The file handle.</param>
    /// <exception cref="ArgumentNullException"><paramref name="handle"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="handle"/> is invalid.</exception>
    /// <exception cref="ObjectDisposedException">The handle is closed.</exception>
    public static void FlushToDisk(SafeFileHandle handle)
    {
        if (Portable.PassThrough.Enabled)
        {
            System.IO.RandomAccess.FlushToDisk(handle);
            return;
        }
        HandleValidation.ValidateHandle(handle);
        HandleIo.FlushToDisk(handle);
    }

    /// <summary>Reads bytes at an offset with one system call.</summary>
    /// <param name="handle">The file handle, opened with read access.</param>
    /// <param name="buffer">Where the bytes go.</param>
    /// <param name="fileOffset">The file position to read from; ignored for handles without positions.</param>
    /// <returns>The number of bytes read: fewer than requested near the end of the file, 0 at the end.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="handle"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="handle"/> is invalid.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="fileOffset"/> is negative.</exception>
    /// <exception cref="ObjectDisposedException">The handle is closed.</exception>
    /// <exception cref="UnauthorizedAccessException">The handle was not opened for reading.</exception>
    /// <exception cref="IOException">An I/O error occurred.</exception>
    public static int Read(SafeFileHandle handle, Span<byte> buffer, long fileOffset)
    {
        if (Portable.PassThrough.Enabled)
        {
            return System.IO.RandomAccess.Read(handle, buffer, fileOffset);
        }
        long offset = ValidateInput(handle, fileOffset);
        Direct.DirectIOGuard.Check(handle, buffer, offset); // O_DIRECT handles: alignment, before any system call
        return HandleIo.Read(handle, buffer, offset);
    }

    /// <summary>Reads into several buffers in order, starting at an offset, with one <c>preadv</c>.</summary>
    /// <param name="handle">The file handle, opened with read access.</param>
    /// <param name="buffers">The buffers to fill, in file order.</param>
    /// <param name="fileOffset">The file position to read from; ignored for handles without positions.</param>
    /// <returns>The total number of bytes read.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="handle"/> or <paramref name="buffers"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="handle"/> is invalid.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="fileOffset"/> is negative.</exception>
    /// <exception cref="ObjectDisposedException">The handle is closed.</exception>
    /// <exception cref="UnauthorizedAccessException">The handle was not opened for reading.</exception>
    /// <exception cref="IOException">An I/O error occurred.</exception>
    public static long Read(SafeFileHandle handle, IReadOnlyList<Memory<byte>> buffers, long fileOffset)
    {
        if (Portable.PassThrough.Enabled)
        {
            return System.IO.RandomAccess.Read(handle, buffers, fileOffset);
        }
        long offset = ValidateInput(handle, fileOffset);
        ValidateBuffers(buffers);
        Direct.DirectIOGuard.Check(handle, buffers, offset); // O_DIRECT handles: alignment, before any system call
        return HandleIo.ReadScatter(handle, buffers, offset);
    }

    /// <summary>Writes all bytes at an offset; short writes are continued until everything is written.</summary>
    /// <param name="handle">The file handle, opened with write access.</param>
    /// <param name="buffer">The bytes to write.</param>
    /// <param name="fileOffset">The file position to write at; ignored for handles without positions.</param>
    /// <exception cref="ArgumentNullException"><paramref name="handle"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="handle"/> is invalid.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="fileOffset"/> is negative.</exception>
    /// <exception cref="ObjectDisposedException">The handle is closed.</exception>
    /// <exception cref="UnauthorizedAccessException">The handle was not opened for writing.</exception>
    /// <exception cref="IOException">An I/O error occurred, for example a full disk.</exception>
    public static void Write(SafeFileHandle handle, ReadOnlySpan<byte> buffer, long fileOffset)
    {
        if (Portable.PassThrough.Enabled)
        {
            System.IO.RandomAccess.Write(handle, buffer, fileOffset);
            return;
        }
        long offset = ValidateInput(handle, fileOffset);
        Direct.DirectIOGuard.Check(handle, buffer, offset); // O_DIRECT handles: alignment, before any system call
        HandleIo.Write(handle, buffer, offset);
    }

    /// <summary>Writes several buffers in order, starting at an offset, with <c>pwritev</c>; partial writes are resumed.</summary>
    /// <param name="handle">The file handle, opened with write access.</param>
    /// <param name="buffers">The buffers to write, in file order.</param>
    /// <param name="fileOffset">The file position to write at; ignored for handles without positions.</param>
    /// <exception cref="ArgumentNullException"><paramref name="handle"/> or <paramref name="buffers"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="handle"/> is invalid.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="fileOffset"/> is negative.</exception>
    /// <exception cref="ObjectDisposedException">The handle is closed.</exception>
    /// <exception cref="UnauthorizedAccessException">The handle was not opened for writing.</exception>
    /// <exception cref="IOException">An I/O error occurred, for example a full disk.</exception>
    public static void Write(SafeFileHandle handle, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset)
    {
        if (Portable.PassThrough.Enabled)
        {
            System.IO.RandomAccess.Write(handle, buffers, fileOffset);
            return;
        }
        long offset = ValidateInput(handle, fileOffset);
        ValidateBuffers(buffers);
        Direct.DirectIOGuard.Check(handle, buffers, offset); // O_DIRECT handles: alignment, before any system call
        HandleIo.WriteGather(handle, buffers, offset);
    }

    /// <summary>
    /// Validates a handle and an offset as System.IO does, and returns the offset to use: the same
    /// offset, or -1 for a handle without positions.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static long ValidateInput(SafeFileHandle handle, long fileOffset)
    {
        HandleValidation.ValidateHandle(handle);
        if (fileOffset < 0)
        {
            ThrowHelper.ThrowNeedNonNegative(nameof(fileOffset));
        }
        return SafeFileHandleInternals.CanSeek(handle) ? fileOffset : Unpositioned(HandleFacts.Of(handle));
    }

    /// <summary>
    /// As <see cref="ValidateInput(SafeFileHandle, long)"/> for an operation that goes to an engine: also the handle's
    /// facts, looked up here once, which travel with the operation to the router and the executor.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static long ValidateInput(SafeFileHandle handle, long fileOffset, out HandleFacts facts)
    {
        HandleValidation.ValidateHandle(handle);
        if (fileOffset < 0)
        {
            ThrowHelper.ThrowNeedNonNegative(nameof(fileOffset));
        }
        facts = HandleFacts.Of(handle);
        return SafeFileHandleInternals.CanSeek(handle) ? fileOffset : Unpositioned(facts);
    }

    // A handle without positions reads and writes at its own (a pipe, a socket, a device); an O_PATH handle
    // cannot seek either, but it names a file that System.IO refuses as unseekable, so Spindle does too.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static long Unpositioned(HandleFacts facts)
    {
        if (facts.PathOnly)
        {
            ThrowHelper.ThrowUnseekable();
        }
        return -1;
    }

    private static void ValidateSeekableInput(SafeFileHandle handle)
    {
        HandleValidation.ValidateHandle(handle);
        if (!SafeFileHandleInternals.CanSeek(handle))
        {
            ThrowHelper.ThrowUnseekable();
        }
    }

    private static void ValidateBuffers<T>(IReadOnlyList<T> buffers)
    {
        if (buffers is null)
        {
            ThrowHelper.ThrowArgumentNull(nameof(buffers));
        }
    }

    private static FileIoEngine Engine(IoEngine engine)
    {
        if (engine < IoEngine.Auto || engine > IoEngine.IoUring)
        {
            ThrowHelper.ThrowEnumOutOfRange(nameof(engine));
        }
        return engine == IoEngine.Auto ? EngineSelector.Default : EngineSelector.Get(engine);
    }
}
