using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Engines;
using Spindle.Engines.FastPath;
using Spindle.Handles;

namespace Spindle;

public static partial class SpindleRandomAccess
{
    /// <summary>
    /// The engine that serves <see cref="IoEngine.Auto"/> in this process, after configuration and
    /// fallback: <see cref="IoEngine.IoUring"/>, <see cref="IoEngine.ThreadPool"/> or
    /// <see cref="IoEngine.Sync"/>, never <see cref="IoEngine.Auto"/>.
    /// </summary>
    /// <remarks>
    /// Chosen once per process from the <c>Spindle.IoEngine</c> AppContext value (for example a
    /// <c>RuntimeHostConfigurationOption</c> in the project file), else the <c>SPINDLE_IO_ENGINE</c>
    /// environment variable (<c>sync</c>, <c>threadpool</c>, <c>iouring</c>, <c>auto</c>), else io_uring
    /// when the kernel allows it, else the thread pool.
    /// </remarks>
    public static IoEngine DefaultEngine => Portable.PassThrough.Enabled ? IoEngine.ThreadPool : EngineSelector.Default.Kind;

    /// <summary>Whether the kernel lets this process use io_uring (a ring could be set up).</summary>
    public static bool IsIoUringAvailable => !Portable.PassThrough.Enabled && EngineSelector.IsIoUringAvailable;

    /// <summary>Reads bytes at an offset asynchronously, on the process-wide engine.</summary>
    /// <param name="handle">The file handle, opened with read access.</param>
    /// <param name="buffer">Where the bytes go; it must stay alive until the operation completes.</param>
    /// <param name="fileOffset">The file position to read from; ignored for handles without positions.</param>
    /// <param name="cancellationToken">Cancels the operation; a cancelled operation completes only after the kernel has released the buffer.</param>
    /// <returns>The number of bytes read: fewer than requested near the end of the file, 0 at the end.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="handle"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="handle"/> is invalid.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="fileOffset"/> is negative.</exception>
    /// <exception cref="ObjectDisposedException">The handle is closed.</exception>
    public static ValueTask<int> ReadAsync(SafeFileHandle handle, Memory<byte> buffer, long fileOffset, CancellationToken cancellationToken = default)
        => ReadAsync(handle, buffer, fileOffset, IoEngine.Auto, cancellationToken);

    /// <summary>Reads bytes at an offset asynchronously, on the given engine.</summary>
    /// <param name="handle">The file handle, opened with read access.</param>
    /// <param name="buffer">Where the bytes go; it must stay alive until the operation completes.</param>
    /// <param name="fileOffset">The file position to read from; ignored for handles without positions.</param>
    /// <param name="engine">The engine to run the operation on; <see cref="IoEngine.Auto"/> for the process-wide one.</param>
    /// <param name="cancellationToken">Cancels the operation.</param>
    /// <returns>The number of bytes read.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="fileOffset"/> is negative or <paramref name="engine"/> undefined.</exception>
    public static ValueTask<int> ReadAsync(SafeFileHandle handle, Memory<byte> buffer, long fileOffset, IoEngine engine, CancellationToken cancellationToken = default)
    {
        if (Portable.PassThrough.Enabled)
        {
            return Portable.PassThroughRandomAccess.ReadAsync(handle, buffer, fileOffset, engine, cancellationToken);
        }
        long offset = ValidateInput(handle, fileOffset, out HandleFacts facts);
        Direct.DirectIOGuard.Check(facts.DirectAlignment, buffer, offset); // O_DIRECT handles: alignment, before any system call
        FileIoEngine selected = Engine(engine);
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled<int>(cancellationToken);
        }
        long started = AsyncTiming.Start(selected.Kind);
        return AsyncTiming.Time(selected.ReadAsync(handle, facts, buffer, offset, ReadFastPath.Enabled, cancellationToken), started, selected.Kind, IoDirection.Read);
    }

    /// <summary>Reads into several buffers asynchronously, on the process-wide engine.</summary>
    /// <param name="handle">The file handle, opened with read access.</param>
    /// <param name="buffers">The buffers to fill, in file order.</param>
    /// <param name="fileOffset">The file position to read from; ignored for handles without positions.</param>
    /// <param name="cancellationToken">Cancels the operation.</param>
    /// <returns>The total number of bytes read.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="handle"/> or <paramref name="buffers"/> is null.</exception>
    public static ValueTask<long> ReadAsync(SafeFileHandle handle, IReadOnlyList<Memory<byte>> buffers, long fileOffset, CancellationToken cancellationToken = default)
        => ReadAsync(handle, buffers, fileOffset, IoEngine.Auto, cancellationToken);

    /// <summary>Reads into several buffers asynchronously, on the given engine.</summary>
    /// <param name="handle">The file handle, opened with read access.</param>
    /// <param name="buffers">The buffers to fill, in file order.</param>
    /// <param name="fileOffset">The file position to read from; ignored for handles without positions.</param>
    /// <param name="engine">The engine to run the operation on.</param>
    /// <param name="cancellationToken">Cancels the operation.</param>
    /// <returns>The total number of bytes read.</returns>
    public static ValueTask<long> ReadAsync(SafeFileHandle handle, IReadOnlyList<Memory<byte>> buffers, long fileOffset, IoEngine engine, CancellationToken cancellationToken = default)
    {
        if (Portable.PassThrough.Enabled)
        {
            return Portable.PassThroughRandomAccess.ReadAsync(handle, buffers, fileOffset, engine, cancellationToken);
        }
        long offset = ValidateInput(handle, fileOffset, out HandleFacts facts);
        ValidateBuffers(buffers);
        Direct.DirectIOGuard.Check(facts.DirectAlignment, buffers, offset); // O_DIRECT handles: alignment, before any system call
        FileIoEngine selected = Engine(engine);
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled<long>(cancellationToken);
        }
        long started = AsyncTiming.Start(selected.Kind);
        return AsyncTiming.Time(selected.ReadScatterAsync(handle, facts, buffers, offset, ReadFastPath.Enabled, cancellationToken), started, selected.Kind, IoDirection.Read);
    }

    /// <summary>Writes all bytes at an offset asynchronously, on the process-wide engine.</summary>
    /// <param name="handle">The file handle, opened with write access.</param>
    /// <param name="buffer">The bytes to write; it must stay alive until the operation completes.</param>
    /// <param name="fileOffset">The file position to write at; ignored for handles without positions.</param>
    /// <param name="cancellationToken">Cancels the operation.</param>
    /// <returns>A task that completes when every byte is written.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="handle"/> is null.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="fileOffset"/> is negative.</exception>
    public static ValueTask WriteAsync(SafeFileHandle handle, ReadOnlyMemory<byte> buffer, long fileOffset, CancellationToken cancellationToken = default)
        => WriteAsync(handle, buffer, fileOffset, IoEngine.Auto, cancellationToken);

    /// <summary>Writes all bytes at an offset asynchronously, on the given engine.</summary>
    /// <param name="handle">The file handle, opened with write access.</param>
    /// <param name="buffer">The bytes to write.</param>
    /// <param name="fileOffset">The file position to write at; ignored for handles without positions.</param>
    /// <param name="engine">The engine to run the operation on.</param>
    /// <param name="cancellationToken">Cancels the operation.</param>
    /// <returns>A task that completes when every byte is written.</returns>
    public static ValueTask WriteAsync(SafeFileHandle handle, ReadOnlyMemory<byte> buffer, long fileOffset, IoEngine engine, CancellationToken cancellationToken = default)
    {
        if (Portable.PassThrough.Enabled)
        {
            return Portable.PassThroughRandomAccess.WriteAsync(handle, buffer, fileOffset, engine, cancellationToken);
        }
        long offset = ValidateInput(handle, fileOffset, out HandleFacts facts);
        Direct.DirectIOGuard.Check(facts.DirectAlignment, buffer, offset); // O_DIRECT handles: alignment, before any system call
        FileIoEngine selected = Engine(engine);
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled(cancellationToken);
        }
        long started = AsyncTiming.Start(selected.Kind);
        return AsyncTiming.Time(selected.WriteAsync(handle, facts, buffer, offset, useFastPath: true, cancellationToken), started, selected.Kind, IoDirection.Write);
    }

    /// <summary>Writes several buffers in order asynchronously, on the process-wide engine.</summary>
    /// <param name="handle">The file handle, opened with write access.</param>
    /// <param name="buffers">The buffers to write, in file order.</param>
    /// <param name="fileOffset">The file position to write at; ignored for handles without positions.</param>
    /// <param name="cancellationToken">Cancels the operation.</param>
    /// <returns>A task that completes when every byte is written.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="handle"/> or <paramref name="buffers"/> is null.</exception>
    public static ValueTask WriteAsync(SafeFileHandle handle, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset, CancellationToken cancellationToken = default)
        => WriteAsync(handle, buffers, fileOffset, IoEngine.Auto, cancellationToken);

    /// <summary>Writes several buffers in order asynchronously, on the given engine.</summary>
    /// <param name="handle">The file handle, opened with write access.</param>
    /// <param name="buffers">The buffers to write, in file order.</param>
    /// <param name="fileOffset">The file position to write at; ignored for handles without positions.</param>
    /// <param name="engine">The engine to run the operation on.</param>
    /// <param name="cancellationToken">Cancels the operation.</param>
    /// <returns>A task that completes when every byte is written.</returns>
    public static ValueTask WriteAsync(SafeFileHandle handle, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset, IoEngine engine, CancellationToken cancellationToken = default)
    {
        if (Portable.PassThrough.Enabled)
        {
            return Portable.PassThroughRandomAccess.WriteAsync(handle, buffers, fileOffset, engine, cancellationToken);
        }
        long offset = ValidateInput(handle, fileOffset, out HandleFacts facts);
        ValidateBuffers(buffers);
        Direct.DirectIOGuard.Check(facts.DirectAlignment, buffers, offset); // O_DIRECT handles: alignment, before any system call
        FileIoEngine selected = Engine(engine);
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled(cancellationToken);
        }
        long started = AsyncTiming.Start(selected.Kind);
        return AsyncTiming.Time(selected.WriteGatherAsync(handle, facts, buffers, offset, useFastPath: true, cancellationToken), started, selected.Kind, IoDirection.Write);
    }

    /// <summary>Flushes the file's data and metadata to the storage device asynchronously (<c>fsync</c>), on the process-wide engine.</summary>
    /// <param name="handle">The file handle.</param>
    /// <param name="cancellationToken">Cancels the operation.</param>
    /// <returns>A task that completes when the device has the data.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="handle"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="handle"/> is invalid.</exception>
    /// <exception cref="ObjectDisposedException">The handle is closed.</exception>
    public static ValueTask FlushToDiskAsync(SafeFileHandle handle, CancellationToken cancellationToken = default)
        => FlushToDiskAsync(handle, IoEngine.Auto, cancellationToken);

    /// <summary>Flushes the file's data and metadata to the storage device asynchronously (<c>fsync</c>), on the given engine.</summary>
    /// <param name="handle">The file handle.</param>
    /// <param name="engine">The engine to run the operation on.</param>
    /// <param name="cancellationToken">Cancels the operation.</param>
    /// <returns>A task that completes when the device has the data.</returns>
    public static ValueTask FlushToDiskAsync(SafeFileHandle handle, IoEngine engine, CancellationToken cancellationToken = default)
        => SyncAsync(handle, engine, cancellationToken, static (selected, handle, facts, token) => selected.FlushToDiskAsync(handle, facts, token));

    // The entry of the asynchronous syncs (fsync, fdatasync): System.IO's fsync when passing through (a data sync is
    // an fsync there), the handle checked, its facts looked up, the engine chosen, a token cancelled before the start honoured.
    private static ValueTask SyncAsync(SafeFileHandle handle, IoEngine engine, CancellationToken cancellationToken,
        Func<FileIoEngine, SafeFileHandle, HandleFacts, CancellationToken, ValueTask> sync)
    {
        if (Portable.PassThrough.Enabled)
        {
            return Portable.PassThroughRandomAccess.FlushToDiskAsync(handle, engine, cancellationToken);
        }
        HandleValidation.ValidateHandle(handle);
        FileIoEngine selected = Engine(engine);
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled(cancellationToken);
        }
        return sync(selected, handle, HandleFacts.Of(handle), cancellationToken);
    }
}
