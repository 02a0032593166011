using Microsoft.Win32.SafeHandles;
using Spindle.Engines;
using Spindle.Engines.FastPath;
using Spindle.Syscalls;
using Spindle.Handles;

namespace Spindle;

public static partial class SpindleRandomAccess
{
    /// <summary>
    /// Flushes the file's data, and the metadata needed to read it back, from the OS caches to the storage
    /// device (<c>fdatasync</c>): cheaper than <see cref="FlushToDisk"/> when only data changed.
    /// </summary>
    /// <remarks>
    /// When it returns, every byte written to the file before the call, the file's size and its block map are on
    /// the device; timestamps and permissions may not be, and neither is the directory entry of a new file (sync
    /// the directory for that). Off Linux, and on handles that cannot be synchronised, as <see cref="FlushToDisk"/>.
    /// </remarks>
    /// <param name="handle">The file handle.</param>
    /// <exception cref="ArgumentNullException"><paramref name="handle"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="handle"/> is invalid.</exception>
    /// <exception cref="ObjectDisposedException">The handle is closed.</exception>
    /// <exception cref="IOException">The device reported an error (the data may be lost).</exception>
    public static void FlushDataToDisk(SafeFileHandle handle)
    {
        if (Portable.PassThrough.Enabled)
        {
            System.IO.RandomAccess.FlushToDisk(handle);
            return;
        }
        HandleValidation.ValidateHandle(handle);
        DurableIo.FlushData(handle);
    }

    /// <summary>As <see cref="FlushDataToDisk"/>, asynchronously, on the process-wide engine.</summary>
    /// <param name="handle">The file handle.</param>
    /// <param name="cancellationToken">Cancels the operation before it starts; a started sync runs to its end.</param>
    /// <returns>A task that completes when the device has the data.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="handle"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="handle"/> is invalid.</exception>
    /// <exception cref="ObjectDisposedException">The handle is closed.</exception>
    public static ValueTask FlushDataToDiskAsync(SafeFileHandle handle, CancellationToken cancellationToken = default)
        => FlushDataToDiskAsync(handle, IoEngine.Auto, cancellationToken);

    /// <summary>As <see cref="FlushDataToDisk"/>, asynchronously, on the given engine.</summary>
    /// <param name="handle">The file handle.</param>
    /// <param name="engine">The engine: <see cref="IoEngine.Sync"/> syncs on the calling thread, <see cref="IoEngine.ThreadPool"/> on a pool thread, io_uring (and <see cref="IoEngine.Auto"/> where it runs) on the ring (<c>IORING_OP_FSYNC</c> with the data-sync flag).</param>
    /// <param name="cancellationToken">Cancels the operation before it starts; a started sync runs to its end.</param>
    /// <returns>A task that completes when the device has the data.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="engine"/> is undefined.</exception>
    public static ValueTask FlushDataToDiskAsync(SafeFileHandle handle, IoEngine engine, CancellationToken cancellationToken = default)
        => SyncAsync(handle, engine, cancellationToken, static (selected, handle, facts, token) => selected.FlushDataToDiskAsync(handle, facts, token));

    /// <summary>
    /// Writes all bytes at an offset and returns only when they are on the storage device: one
    /// <c>pwritev2</c> with <c>RWF_DSYNC</c> where the kernel takes it, else the write and an <c>fdatasync</c>.
    /// </summary>
    /// <remarks>
    /// When it returns, these bytes, and the file size that covers them, are on the device (what
    /// <see cref="FlushDataToDisk"/> promises, for this write's range). It says nothing of other writes, of
    /// timestamps, or of the directory entry of a new file. When it throws, any part of the bytes may or may not
    /// be in the file, and none of them is known to be durable. An empty buffer makes no system call.
    /// </remarks>
    /// <param name="handle">The file handle, opened with write access.</param>
    /// <param name="buffer">The bytes to write.</param>
    /// <param name="fileOffset">The file position to write at; ignored for handles without positions and for handles opened to append.</param>
    /// <exception cref="ArgumentNullException"><paramref name="handle"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="handle"/> is invalid, or the handle is <c>O_DIRECT</c> and the buffer or offset is not aligned.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="fileOffset"/> is negative.</exception>
    /// <exception cref="ObjectDisposedException">The handle is closed.</exception>
    /// <exception cref="UnauthorizedAccessException">The handle was not opened for writing.</exception>
    /// <exception cref="IOException">The write or the sync failed, for example a full disk.</exception>
    public static void WriteDurable(SafeFileHandle handle, ReadOnlySpan<byte> buffer, long fileOffset)
    {
        if (Portable.PassThrough.Enabled)
        {
            System.IO.RandomAccess.Write(handle, buffer, fileOffset);
            System.IO.RandomAccess.FlushToDisk(handle);
            return;
        }
        long offset = ValidateInput(handle, fileOffset);
        Direct.DirectIOGuard.Check(handle, buffer, offset); // O_DIRECT handles: alignment, before any system call
        DurableIo.WriteDurable(handle, buffer, offset);
    }

    /// <summary>As <see cref="WriteDurable"/>, asynchronously, on the process-wide engine.</summary>
    /// <param name="handle">The file handle, opened with write access.</param>
    /// <param name="buffer">The bytes to write; it must stay alive until the operation completes.</param>
    /// <param name="fileOffset">The file position to write at; ignored for handles without positions and for handles opened to append.</param>
    /// <param name="cancellationToken">Cancels the operation before it starts; a started write runs to its end.</param>
    /// <returns>A task that completes when the bytes are on the device.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="handle"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="fileOffset"/> is negative.</exception>
    public static ValueTask WriteDurableAsync(SafeFileHandle handle, ReadOnlyMemory<byte> buffer, long fileOffset, CancellationToken cancellationToken = default)
        => WriteDurableAsync(handle, buffer, fileOffset, IoEngine.Auto, cancellationToken);

    /// <summary>As <see cref="WriteDurable"/>, asynchronously, on the given engine.</summary>
    /// <param name="handle">The file handle, opened with write access.</param>
    /// <param name="buffer">The bytes to write; it must stay alive until the operation completes.</param>
    /// <param name="fileOffset">The file position to write at; ignored for handles without positions and for handles opened to append.</param>
    /// <param name="engine">The engine: <see cref="IoEngine.Sync"/> writes on the calling thread, <see cref="IoEngine.ThreadPool"/> on a pool thread, io_uring (and <see cref="IoEngine.Auto"/> where it runs) on the ring (a write with <c>RWF_DSYNC</c>, else a write linked to an <c>fdatasync</c>).</param>
    /// <param name="cancellationToken">Cancels the operation before it starts; a started write runs to its end.</param>
    /// <returns>A task that completes when the bytes are on the device.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="fileOffset"/> is negative or <paramref name="engine"/> undefined.</exception>
    public static ValueTask WriteDurableAsync(SafeFileHandle handle, ReadOnlyMemory<byte> buffer, long fileOffset, IoEngine engine, CancellationToken cancellationToken = default)
    {
        if (Portable.PassThrough.Enabled)
        {
            Portable.PassThrough.Engine(engine);
            return new ValueTask(WriteThenFlushAsync(handle, buffer, fileOffset, cancellationToken));
        }
        long offset = ValidateInput(handle, fileOffset, out HandleFacts facts);
        Direct.DirectIOGuard.Check(facts.DirectAlignment, buffer, offset); // O_DIRECT handles: alignment, before any system call
        FileIoEngine selected = Engine(engine);
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled(cancellationToken);
        }
        if (buffer.IsEmpty)
        {
            return default;
        }
        return selected.WriteDurableAsync(handle, facts, buffer, offset, cancellationToken);
    }

    // Off Linux: System.IO's write, then its only flush (fsync or FlushFileBuffers), which covers the data.
    private static async Task WriteThenFlushAsync(SafeFileHandle handle, ReadOnlyMemory<byte> buffer, long fileOffset, CancellationToken cancellationToken)
    {
        await System.IO.RandomAccess.WriteAsync(handle, buffer, fileOffset, cancellationToken).ConfigureAwait(false);
        await Task.Run(() => System.IO.RandomAccess.FlushToDisk(handle), CancellationToken.None).ConfigureAwait(false);
    }
}
