using Spindle.Clients.Devices;
using Tsavorite.core;

namespace Spindle.Garnet;

/// <summary>
/// A Tsavorite storage device on Spindle, for Garnet's storage tier, append-only file and checkpoints: one file per
/// segment (<c>name.0</c>, <c>name.1</c>, … like Garnet's own devices), opened <c>O_DIRECT</c> (see
/// <see cref="SpindleStorageDeviceOptions.DirectIO"/>), read and written in place in Tsavorite's sector-aligned
/// native buffers through Spindle's engines, io_uring where the kernel allows it (see
/// <see cref="SpindleStorageDeviceOptions.ReadEngine"/> and <see cref="SpindleStorageDeviceOptions.Engine"/>).
/// </summary>
/// <remarks>
/// <para>Contract, as Garnet's devices honour it: addresses, lengths and buffer addresses are multiples of
/// <see cref="StorageDeviceBase.SectorSize"/> (the file system's direct-I/O alignment, at least 512); a request that
/// is not is refused with an <see cref="ArgumentException"/> before anything is issued and its callback is not
/// called. Every accepted operation calls its callback exactly once: with 0 and the bytes transferred (a read near
/// the end of a segment may return fewer), or with a non-zero error code (the low 16 bits of the
/// <see cref="IOException"/>'s HResult, else <see cref="uint.MaxValue"/>) and the exception behind it. Where the
/// callback runs: on the caller's thread when the I/O finished at once (every read on <see cref="IoEngine.Sync"/>);
/// a read's, on io_uring, on the thread that takes its completion from the ring (the ring's thread, or a thread in
/// <see cref="TryComplete"/>), never waiting for a thread-pool thread; a write's, on a thread-pool thread.
/// <see cref="Dispose"/> waits until the kernel is done with every operation in flight and its callback has
/// returned (except callbacks on the disposing thread's own stack), then closes the segments; later operations fail
/// with an error code and an <see cref="ObjectDisposedException"/>.</para>
/// </remarks>
public sealed class SpindleStorageDevice : StorageDeviceBase
{
    /// <summary>The throttle limit Garnet's own local devices use.</summary>
    public const int DefaultThrottleLimit = 120;

    private readonly SpindleStorageDeviceOptions _options;
    private readonly SegmentFiles _files;          // the open segment files
    private readonly InFlightOperations _inFlight; // operations whose callback has not returned; Dispose waits for them

    /// <summary>Creates a device whose segment files are <c><paramref name="filename"/>.N</c>.</summary>
    /// <param name="filename">The path prefix of the segment files; its directory is created if missing.</param>
    /// <param name="options">How to open and drive the segment files; null for the defaults.</param>
    /// <exception cref="ArgumentException"><paramref name="filename"/> is empty.</exception>
    /// <exception cref="IOException">The directory cannot be created or probed.</exception>
    public SpindleStorageDevice(string filename, SpindleStorageDeviceOptions? options = null)
        : base(filename, SectorSizes.ForSegmentsOf(filename), (options ?? SpindleStorageDeviceOptions.Default).Capacity)
    {
        _options = options ?? SpindleStorageDeviceOptions.Default;
        _files = new SegmentFiles(id => GetSegmentFilename(FileName, id), new(_options.DirectIO, FileOptions.None, _options.PreallocateFile, _options.DeleteOnClose));
        _inFlight = new InFlightOperations(this);
        ThrottleLimit = _options.ThrottleLimit;
        ReadEngine = ReadEngineFor(_options.ReadEngine);
        if (_options.RecoverDevice && SegmentFiles.FindRange(FileName) is (int start, int end))
        {
            startSegment = start;
            endSegment = end;
        }
    }

    /// <summary>Whether the segment files bypass the page cache: <see cref="SpindleStorageDeviceOptions.DirectIO"/>, unless the file system refused <c>O_DIRECT</c>.</summary>
    public bool IsDirectIO => _files.IsDirectIO;

    /// <summary>
    /// The engine this device's reads run on (never <see cref="IoEngine.Auto"/>): <see cref="SpindleStorageDeviceOptions.ReadEngine"/>,
    /// with <see cref="IoEngine.Auto"/> resolved as that option says.
    /// </summary>
    public IoEngine ReadEngine { get; }

    /// <summary>Operations accepted whose callback has not returned yet.</summary>
    public int PendingOperations => _inFlight.Count;

    /// <inheritdoc/>
    public override bool Throttle() => _inFlight.Count > ThrottleLimit;

    /// <inheritdoc/>
    /// <remarks>
    /// Takes the io_uring completions that are ready on the calling thread (<see cref="SpindleRandomAccess.PollCompletions"/>):
    /// a Garnet session that waits for its read (<c>CompletePending(wait: true)</c> calls this in its loop) finishes it
    /// itself, running the read's callback here, instead of waiting for another thread to deliver it.
    /// </remarks>
    public override bool TryComplete()
    {
        SpindleRandomAccess.PollCompletions();
        return true;
    }

    /// <inheritdoc/>
    /// <exception cref="ArgumentException">The address, length or buffer is not a multiple of <see cref="StorageDeviceBase.SectorSize"/>.</exception>
    public override void ReadAsync(int segmentId, ulong sourceAddress, IntPtr destinationAddress, uint readLength, DeviceIOCompletionCallback callback, object context)
    {
        SectorSizes.Check(SectorSize, sourceAddress, destinationAddress, readLength, nameof(SpindleStorageDevice));
        NativeMemoryOperation operation = NativeMemoryOperation.Rent(_inFlight, destinationAddress, readLength, callback, context);
        if (operation.TryBegin(_files, segmentId, segmentSize, buffered: false, out var handle))
        {
            // Tsavorite's read callbacks only signal (queue the record for its session, release a waiter) or issue the
            // next read of a record: they run where the completion is reaped, so no read waits for a free pool thread.
            operation.StartRead(handle, (long)sourceAddress, ReadEngine, inline: true);
        }
    }

    /// <inheritdoc/>
    /// <exception cref="ArgumentException">The address, length or buffer is not a multiple of <see cref="StorageDeviceBase.SectorSize"/>.</exception>
    /// <remarks>
    /// Write callbacks run on the thread pool: Tsavorite's flush callbacks may go on to commit (the append-only file's
    /// commit writes and waits for a commit record), which must not hold up the thread that reaps completions.
    /// </remarks>
    public override void WriteAsync(IntPtr sourceAddress, int segmentId, ulong destinationAddress, uint numBytesToWrite, DeviceIOCompletionCallback callback, object context)
    {
        SectorSizes.Check(SectorSize, destinationAddress, sourceAddress, numBytesToWrite, nameof(SpindleStorageDevice));
        HandleCapacity(segmentId);
        NativeMemoryOperation operation = NativeMemoryOperation.Rent(_inFlight, sourceAddress, numBytesToWrite, callback, context);
        if (operation.TryBegin(_files, segmentId, segmentSize, buffered: false, out var handle))
        {
            operation.StartWrite(handle, (long)destinationAddress, _options.Engine, durable: _options.WriteThrough, inline: false);
        }
    }

    /// <inheritdoc/>
    /// <remarks>
    /// The segment's handle is closed at once; operations still in flight on it keep the descriptor open until the
    /// kernel completes them (Spindle references the handle per operation). Then the file is deleted; a file that
    /// is already gone is not an error.
    /// </remarks>
    public override void RemoveSegment(int segment) => _files.Remove(segment);

    /// <inheritdoc/>
    public override void RemoveSegmentAsync(int segment, AsyncCallback callback, IAsyncResult result)
    {
        RemoveSegment(segment);
        callback(result);
    }

    /// <inheritdoc/>
    /// <remarks>With a segment size, that size; without one (a single unbounded file), the file's length.</remarks>
    public override long GetFileSize(int segment)
        => segmentSize > 0 ? segmentSize : SpindleRandomAccess.GetLength(_files.Get(segment, segmentSize));

    /// <inheritdoc/>
    /// <remarks>Closes every segment file (deleting it with <see cref="SpindleStorageDeviceOptions.DeleteOnClose"/>).</remarks>
    public override void Reset() => _files.CloseAll();

    /// <summary>
    /// Waits until every operation in flight has completed (the kernel is done with its memory and its callback has
    /// returned; called from inside a callback, it does not wait for the callbacks on its own thread), then closes the
    /// segment files (deleting them with <see cref="SpindleStorageDeviceOptions.DeleteOnClose"/>). Operations issued
    /// afterwards complete at once with an error code.
    /// </summary>
    public override void Dispose()
    {
        if (_inFlight.CloseAndDrain())
        {
            _files.CloseAll();
        }
    }

    /// <inheritdoc/>
    public override string ToString() => $"{nameof(SpindleStorageDevice)} {FileName} (sector {SectorSize}, {(IsDirectIO ? "O_DIRECT" : "page cache")}, reads {ReadEngine}, writes {_options.Engine})";

    // Not Spindle's Auto (io_uring, else the thread pool): without io_uring, a read that completes on the pool would
    // need a free pool thread to finish while Garnet's sessions hold them all, so it runs on the asking thread instead.
    private static IoEngine ReadEngineFor(IoEngine requested)
        => requested != IoEngine.Auto ? requested : SpindleRandomAccess.IsIoUringAvailable ? IoEngine.IoUring : IoEngine.Sync;
}
