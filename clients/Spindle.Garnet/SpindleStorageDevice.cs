using System.Collections.Concurrent;
using System.Diagnostics.CodeAnalysis;
using Microsoft.Win32.SafeHandles;
using Tsavorite.core;

namespace Spindle.Garnet;

/// <summary>
/// A Tsavorite storage device on Spindle, for Garnet's storage tier, append-only file and checkpoints: one file per
/// segment (<c>name.0</c>, <c>name.1</c>, … like Garnet's own devices), opened <c>O_DIRECT</c> (see
/// <see cref="SpindleStorageDeviceOptions.DirectIO"/>), read and written in place in Tsavorite's sector-aligned
/// native buffers through Spindle's engines: reads on the thread that asks (see
/// <see cref="SpindleStorageDeviceOptions.ReadEngine"/>), writes on io_uring where the kernel allows it.
/// </summary>
/// <remarks>
/// <para>Contract, as Garnet's devices honour it: addresses, lengths and buffer addresses are multiples of
/// <see cref="StorageDeviceBase.SectorSize"/> (the file system's direct-I/O alignment, at least 512); a request that
/// is not is refused with an <see cref="ArgumentException"/> before anything is issued and its callback is not
/// called. Every accepted operation calls its callback exactly once: with 0 and the bytes transferred (a read near
/// the end of a segment may return fewer), or with a non-zero error code (the low 16 bits of the
/// <see cref="IOException"/>'s HResult, else <see cref="uint.MaxValue"/>) and the exception behind it. The callback
/// runs where Spindle delivers the completion: on the caller's thread when the I/O finished at once (every read on
/// the default <see cref="SpindleStorageDeviceOptions.ReadEngine"/>), otherwise on a thread-pool thread.
/// <see cref="Dispose"/> waits until the kernel is done with every operation in flight and its callback has
/// returned, then closes the segments; later operations fail with an error code and an
/// <see cref="ObjectDisposedException"/>.</para>
/// </remarks>
public sealed class SpindleStorageDevice : StorageDeviceBase
{
    /// <summary>The throttle limit Garnet's own local devices use.</summary>
    public const int DefaultThrottleLimit = 120;

    private static readonly ConcurrentDictionary<string, uint> s_sectorSizes = new(); // direct-I/O alignment by directory, probed once

    private readonly ConcurrentDictionary<int, SafeFileHandle> _segments = new(); // open segment files by id
    private readonly SpindleStorageDeviceOptions _options;
    private readonly object _openLock = new();  // serialises opening a segment, so each file is opened once
    private readonly object _drainGate = new(); // Dispose waits on it for _pending to drop to the callbacks on its own stack
    private int _pending;                       // operations accepted whose callback has not returned yet
    private volatile bool _disposed;            // set once by Dispose; later operations fail

    [ThreadStatic]
    private static SpindleStorageDevice? t_callbackDevice; // the device whose callback this thread is running, if any
    [ThreadStatic]
    private static int t_callbackDepth;                    // how many of that device's callbacks are on this thread's stack

    /// <summary>Creates a device whose segment files are <c><paramref name="filename"/>.N</c>.</summary>
    /// <param name="filename">The path prefix of the segment files; its directory is created if missing.</param>
    /// <param name="options">How to open and drive the segment files; null for the defaults.</param>
    /// <exception cref="ArgumentException"><paramref name="filename"/> is empty.</exception>
    /// <exception cref="IOException">The directory cannot be created or probed.</exception>
    public SpindleStorageDevice(string filename, SpindleStorageDeviceOptions? options = null)
        : base(filename, SectorSizeOf(filename), (options ?? SpindleStorageDeviceOptions.Default).Capacity)
    {
        _options = options ?? SpindleStorageDeviceOptions.Default;
        IsDirectIO = _options.DirectIO;
        ThrottleLimit = _options.ThrottleLimit;
        if (_options.RecoverDevice)
        {
            RecoverSegmentRange();
        }
    }

    /// <summary>Whether the segment files bypass the page cache: <see cref="SpindleStorageDeviceOptions.DirectIO"/>, unless the file system refused <c>O_DIRECT</c>.</summary>
    public bool IsDirectIO { get; private set; }

    /// <summary>Operations accepted whose callback has not returned yet.</summary>
    public int PendingOperations => Volatile.Read(ref _pending);

    /// <inheritdoc/>
    public override bool Throttle() => Volatile.Read(ref _pending) > ThrottleLimit;

    /// <inheritdoc/>
    /// <remarks>Spindle's engines deliver completions as they happen; there is nothing to poll.</remarks>
    public override bool TryComplete() => true;

    /// <inheritdoc/>
    /// <exception cref="ArgumentException">The address, length or buffer is not a multiple of <see cref="StorageDeviceBase.SectorSize"/>.</exception>
    public override void ReadAsync(int segmentId, ulong sourceAddress, IntPtr destinationAddress, uint readLength, DeviceIOCompletionCallback callback, object context)
    {
        SectorAlignment.Check(SectorSize, sourceAddress, destinationAddress, readLength);
        DeviceOperation operation = DeviceOperation.Rent(this, destinationAddress, readLength, callback, context);
        if (TryBegin(segmentId, operation, out SafeFileHandle? handle))
        {
            operation.StartRead(handle, (long)sourceAddress, _options.ReadEngine);
        }
    }

    /// <inheritdoc/>
    /// <exception cref="ArgumentException">The address, length or buffer is not a multiple of <see cref="StorageDeviceBase.SectorSize"/>.</exception>
    public override void WriteAsync(IntPtr sourceAddress, int segmentId, ulong destinationAddress, uint numBytesToWrite, DeviceIOCompletionCallback callback, object context)
    {
        SectorAlignment.Check(SectorSize, destinationAddress, sourceAddress, numBytesToWrite);
        HandleCapacity(segmentId);
        DeviceOperation operation = DeviceOperation.Rent(this, sourceAddress, numBytesToWrite, callback, context);
        if (TryBegin(segmentId, operation, out SafeFileHandle? handle))
        {
            operation.StartWrite(handle, (long)destinationAddress, _options.Engine, durable: _options.WriteThrough);
        }
    }

    /// <inheritdoc/>
    /// <remarks>
    /// The segment's handle is closed at once; operations still in flight on it keep the descriptor open until the
    /// kernel completes them (Spindle references the handle per operation). Then the file is deleted; a file that
    /// is already gone is not an error.
    /// </remarks>
    public override void RemoveSegment(int segment)
    {
        if (_segments.TryRemove(segment, out SafeFileHandle? handle))
        {
            handle.Dispose();
        }
        try
        {
            File.Delete(SegmentPath(segment));
        }
        catch (IOException)
        {
            // Garnet's devices treat a segment that cannot be deleted as already gone.
        }
        catch (UnauthorizedAccessException)
        {
        }
    }

    /// <inheritdoc/>
    public override void RemoveSegmentAsync(int segment, AsyncCallback callback, IAsyncResult result)
    {
        RemoveSegment(segment);
        callback(result);
    }

    /// <inheritdoc/>
    /// <remarks>With a segment size, that size; without one (a single unbounded file), the file's length.</remarks>
    public override long GetFileSize(int segment)
    {
        if (segmentSize > 0)
        {
            return segmentSize;
        }
        return SpindleRandomAccess.GetLength(SegmentHandle(segment));
    }

    /// <inheritdoc/>
    /// <remarks>Closes every segment file (deleting it with <see cref="SpindleStorageDeviceOptions.DeleteOnClose"/>).</remarks>
    public override void Reset() => CloseSegments();

    /// <summary>
    /// Waits until every operation in flight has completed (the kernel is done with its memory and its callback has
    /// returned; called from inside a callback, it does not wait for the callbacks on its own thread), then closes the
    /// segment files (deleting them with <see cref="SpindleStorageDeviceOptions.DeleteOnClose"/>). Operations issued
    /// afterwards complete at once with an error code.
    /// </summary>
    public override void Dispose()
    {
        if (_disposed)
        {
            return;
        }
        _disposed = true;
        // Tsavorite may dispose a device from inside one of its callbacks: those on this thread's stack cannot
        // finish before Dispose returns, so they are not waited for.
        int ownCallbacks = t_callbackDevice == this ? t_callbackDepth : 0;
        lock (_drainGate)
        {
            // A completion that saw _disposed false decremented before this read (both sides fence).
            while (Volatile.Read(ref _pending) > ownCallbacks)
            {
                Monitor.Wait(_drainGate);
            }
        }
        CloseSegments();
    }

    /// <inheritdoc/>
    public override string ToString() => $"{nameof(SpindleStorageDevice)} {FileName} (sector {SectorSize}, {(IsDirectIO ? "O_DIRECT" : "page cache")}, {_options.Engine})";

    /// <summary>Calls an operation's callback, then counts the operation out (waking a Dispose waiting for the last one).</summary>
    internal void RunCallback(DeviceIOCompletionCallback callback, uint errorCode, uint bytes, object? context, Exception? error)
    {
        // Which device's callbacks this thread is inside, and how deep (a Sync read issued from a callback nests).
        SpindleStorageDevice? outerDevice = t_callbackDevice;
        int outerDepth = t_callbackDepth;
        if (outerDevice != this)
        {
            t_callbackDevice = this;
            t_callbackDepth = 0;
        }
        t_callbackDepth++;
        try
        {
            callback(errorCode, bytes, context!, error!);
        }
        finally
        {
            t_callbackDevice = outerDevice;
            t_callbackDepth = outerDepth;
            Interlocked.Decrement(ref _pending);
            if (_disposed)
            {
                // Dispose may wait for a count above 0 (its own callbacks), so every decrement wakes it.
                lock (_drainGate)
                {
                    Monitor.PulseAll(_drainGate);
                }
            }
        }
    }

    private bool TryBegin(int segmentId, DeviceOperation operation, [NotNullWhen(true)] out SafeFileHandle? handle)
    {
        Interlocked.Increment(ref _pending);
        handle = null;
        try
        {
            // Checked after counting, so Dispose either sees this operation or the operation sees Dispose.
            ObjectDisposedException.ThrowIf(_disposed, this);
            handle = SegmentHandle(segmentId);
            return true;
        }
        catch (Exception e)
        {
            operation.Fail(e);
            return false;
        }
    }

    private SafeFileHandle SegmentHandle(int segmentId)
    {
        if (_segments.TryGetValue(segmentId, out SafeFileHandle? handle))
        {
            return handle;
        }
        lock (_openLock)
        {
            if (!_segments.TryGetValue(segmentId, out handle))
            {
                handle = OpenSegment(segmentId);
                _segments[segmentId] = handle;
            }
            return handle;
        }
    }

    private SafeFileHandle OpenSegment(int segmentId)
    {
        string path = SegmentPath(segmentId);
        var open = new SpindleFileOptions
        {
            Mode = FileMode.OpenOrCreate,
            Access = FileAccess.ReadWrite,
            Share = FileShare.ReadWrite | FileShare.Delete,
            DirectIO = _options.DirectIO,
            DirectIOFallback = true,
        };
        SafeFileHandle handle;
        if (_options.PreallocateFile && segmentSize > 0 && !File.Exists(path))
        {
            // Preallocation applies to new files only (System.IO's rule), so a new segment is created as such.
            open.Mode = FileMode.CreateNew;
            open.PreallocationSize = segmentSize;
            try
            {
                handle = SpindleFile.OpenHandle(path, open);
            }
            catch (IOException) when (File.Exists(path))
            {
                open.Mode = FileMode.OpenOrCreate; // another process created it first: open what is there
                open.PreallocationSize = 0;
                handle = SpindleFile.OpenHandle(path, open);
            }
        }
        else
        {
            handle = SpindleFile.OpenHandle(path, open);
        }
        if (_options.DirectIO && !SpindleFile.IsDirectIO(handle))
        {
            IsDirectIO = false;
        }
        return handle;
    }

    private void CloseSegments()
    {
        foreach (int segment in _segments.Keys)
        {
            if (_segments.TryRemove(segment, out SafeFileHandle? handle))
            {
                handle.Dispose();
                if (_options.DeleteOnClose)
                {
                    File.Delete(SegmentPath(segment));
                }
            }
        }
    }

    private string SegmentPath(int segmentId) => GetSegmentFilename(FileName, segmentId);

    private void RecoverSegmentRange()
    {
        var prefix = new FileInfo(FileName);
        if (prefix.Directory is not { Exists: true } directory)
        {
            return;
        }
        var ids = new List<int>();
        foreach (FileInfo file in directory.EnumerateFiles(prefix.Name + ".*"))
        {
            if (int.TryParse(file.Name.AsSpan(prefix.Name.Length + 1), out int id))
            {
                ids.Add(id);
            }
        }
        ids.Sort();
        int previous = -1;
        foreach (int id in ids)
        {
            if (id != previous + 1)
            {
                startSegment = id;
            }
            endSegment = id;
            previous = id;
        }
    }

    private static uint SectorSizeOf(string filename)
    {
        ArgumentException.ThrowIfNullOrEmpty(filename);
        string directory = Path.GetDirectoryName(Path.GetFullPath(filename))!;
        Directory.CreateDirectory(directory);
        // Tsavorite creates a device per checkpoint file and commit record, so the probe runs once per directory.
        return s_sectorSizes.GetOrAdd(directory, SectorAlignment.Probe);
    }
}
