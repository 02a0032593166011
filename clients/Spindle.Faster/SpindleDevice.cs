using FASTER.core;
using Spindle.Clients.Devices;

namespace Spindle.Faster;

/// <summary>
/// A FASTER storage device on Spindle: one file per segment (<c>name.0</c>, <c>name.1</c>, … like FASTER's
/// own devices), opened write-through (and with <c>O_DIRECT</c> when <see cref="SpindleDeviceOptions.DirectIO"/>
/// asks for it), read and written in place in FASTER's sector-aligned native buffers through Spindle's
/// engines (io_uring where the kernel allows it).
/// </summary>
/// <remarks>
/// <para>Replaces <see cref="ManagedLocalStorageDevice"/>, which FASTER falls back to on Linux: that device
/// serialises each segment's I/O through a pool of <see cref="FileStream"/>s (a seek and a lock per call,
/// a <see cref="Task"/> per operation, page-cache reads). Here every operation is one positional system
/// call or io_uring submission on a single handle per segment, with no allocation in the steady state.</para>
/// <para>Contract, as FASTER's devices honour it: offsets, lengths and addresses are multiples of
/// <see cref="StorageDeviceBase.SectorSize"/> (the file system's direct-I/O alignment, at least 512);
/// every accepted operation calls its callback exactly once, with 0 and the bytes transferred (a read
/// near the end of a segment may return fewer) or with a non-zero error code (the low 16 bits of the
/// <see cref="IOException"/>'s HResult, else <see cref="uint.MaxValue"/>). The callback runs where the
/// completion is found: on the caller's thread when the I/O finished at once, else on the thread that reaps it
/// from io_uring (the ring's thread, or a thread calling <see cref="TryComplete"/>), or a thread-pool thread on
/// the thread-pool engine. <see cref="Dispose"/> waits until the kernel is done with every operation in flight
/// and its callback has returned (except callbacks on the disposing thread's own stack), then closes the
/// segments; later operations fail with an error code.</para>
/// </remarks>
public sealed class SpindleDevice : StorageDeviceBase
{
    /// <summary>The throttle limit FASTER's own local devices use.</summary>
    public const int DefaultThrottleLimit = 120;

    private readonly SpindleDeviceOptions _options;
    private readonly SegmentFiles _files;         // the open segment files
    private readonly InFlightOperations _inFlight; // operations whose callback has not returned; Dispose waits for them

    /// <summary>Creates a device whose segment files are <c><paramref name="filename"/>.N</c>.</summary>
    /// <param name="filename">The path prefix of the segment files; its directory is created if missing.</param>
    /// <param name="options">How to open and drive the segment files; null for the defaults.</param>
    /// <exception cref="ArgumentException"><paramref name="filename"/> is empty.</exception>
    /// <exception cref="IOException">The directory cannot be created or probed.</exception>
    public SpindleDevice(string filename, SpindleDeviceOptions? options = null)
        : base(filename, SectorSizes.ForSegmentsOf(filename, (options ?? SpindleDeviceOptions.Default).SectorSize), (options ?? SpindleDeviceOptions.Default).Capacity)
    {
        _options = options ?? SpindleDeviceOptions.Default;
        // Write-through opens O_SYNC, unless each write is made durable on its own (DataSyncWrites).
        FileOptions open = _options.WriteThrough && !_options.DataSyncWrites ? FileOptions.WriteThrough : FileOptions.None;
        _files = new SegmentFiles(id => GetSegmentFilename(FileName, id), new(_options.DirectIO, open, _options.PreallocateFile, _options.DeleteOnClose));
        _inFlight = new InFlightOperations(this);
        ThrottleLimit = DefaultThrottleLimit;
        if (_options.RecoverDevice && SegmentFiles.FindRange(FileName) is (int start, int end))
        {
            startSegment = start;
            endSegment = end;
        }
    }

    /// <summary>The engine this device's reads run on (never <see cref="IoEngine.Auto"/>).</summary>
    public IoEngine Engine => _options.Engine == IoEngine.Auto ? SpindleRandomAccess.DefaultEngine : _options.Engine;

    /// <summary>
    /// The engine this device's writes run on: <see cref="Engine"/>, except that write-through writes through the
    /// page cache (<see cref="SpindleDeviceOptions.DirectIO"/> off) run on <see cref="IoEngine.ThreadPool"/> when
    /// <see cref="Engine"/> is io_uring.
    /// </summary>
    /// <remarks>
    /// io_uring hands a buffered write it cannot finish at once (an <c>O_SYNC</c> one never can) to its
    /// workers, and runs those of one file one at a time; FASTER flushes several pages of a segment at once,
    /// and with each waiting for the disk, one at a time cost FasterLog about half its throughput
    /// (docs/clients.md). On pool threads they overlap, as they do in FASTER's own device.
    /// </remarks>
    public IoEngine WriteEngine => !IsDirectIO && _options.WriteThrough && Engine == IoEngine.IoUring ? IoEngine.ThreadPool : _options.Engine;

    /// <summary>Whether the segment files bypass the page cache: <see cref="SpindleDeviceOptions.DirectIO"/>, unless the file system refused <c>O_DIRECT</c>.</summary>
    public bool IsDirectIO => _files.IsDirectIO;

    /// <summary>Operations accepted whose callback has not returned yet.</summary>
    public int PendingOperations => _inFlight.Count;

    /// <inheritdoc/>
    public override bool Throttle() => _inFlight.Count > ThrottleLimit;

    /// <inheritdoc/>
    /// <remarks>
    /// Takes the io_uring completions that are ready on the calling thread (<see cref="SpindleRandomAccess.PollCompletions"/>):
    /// a FASTER session that waits for its reads (<c>CompletePending(wait: true)</c>) finishes them itself, running
    /// their callbacks here, instead of waiting for another thread to deliver them.
    /// </remarks>
    public override bool TryComplete()
    {
        SpindleRandomAccess.PollCompletions();
        return true;
    }

    /// <inheritdoc/>
    public override void ReadAsync(int segmentId, ulong sourceAddress, IntPtr destinationAddress, uint readLength, DeviceIOCompletionCallback callback, object context)
    {
        NativeMemoryOperation operation = NativeMemoryOperation.Rent(_inFlight, destinationAddress, readLength, callback, context);
        if (operation.TryBegin(_files, segmentId, segmentSize, NeedsBufferedHandle(destinationAddress, sourceAddress, readLength), out var handle))
        {
            // FASTER's callbacks only signal (a semaphore, a pending-request queue): they run where the completion is reaped.
            operation.StartRead(handle, (long)sourceAddress, _options.Engine, inline: true);
        }
    }

    /// <inheritdoc/>
    public override void WriteAsync(IntPtr sourceAddress, int segmentId, ulong destinationAddress, uint numBytesToWrite, DeviceIOCompletionCallback callback, object context)
    {
        HandleCapacity(segmentId);
        NativeMemoryOperation operation = NativeMemoryOperation.Rent(_inFlight, sourceAddress, numBytesToWrite, callback, context);
        if (operation.TryBegin(_files, segmentId, segmentSize, NeedsBufferedHandle(sourceAddress, destinationAddress, numBytesToWrite), out var handle))
        {
            operation.StartWrite(handle, (long)destinationAddress, WriteEngine, durable: _options.WriteThrough && _options.DataSyncWrites, inline: true);
        }
    }

    /// <inheritdoc/>
    /// <remarks>
    /// The segment's handles are closed at once; operations still in flight on them keep the descriptor open
    /// until the kernel completes them (Spindle references the handle per operation). Then the file is deleted.
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
    /// <remarks>Closes every segment file (deleting it with <see cref="SpindleDeviceOptions.DeleteOnClose"/>).</remarks>
    public override void Reset() => _files.CloseAll();

    /// <summary>
    /// Waits until every operation in flight has completed (the kernel is done with its memory and its callback has
    /// returned; called from inside a callback, as FASTER's recovery may, it does not wait for the callbacks on its own
    /// thread), then closes the segment files (deleting them with <see cref="SpindleDeviceOptions.DeleteOnClose"/>).
    /// Operations issued afterwards complete at once with an error code.
    /// </summary>
    public override void Dispose()
    {
        if (_inFlight.CloseAndDrain())
        {
            _files.CloseAll();
        }
    }

    /// <summary>
    /// Whether a request must go through the segment's buffered handle: FASTER's log pages always meet O_DIRECT's
    /// alignment, but some of its metadata writes and reads (commit and checkpoint records) use buffers at arbitrary
    /// addresses; with O_DIRECT those go through a buffered handle on the same file.
    /// </summary>
    private bool NeedsBufferedHandle(IntPtr memory, ulong offset, uint length)
        => _options.DirectIO && !SectorSizes.IsAligned(SectorSize, offset, memory, length);
}
