using System.Collections.Concurrent;
using FASTER.core;
using Microsoft.Win32.SafeHandles;

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
/// <see cref="IOException"/>'s HResult, else <see cref="uint.MaxValue"/>); the callback may run on the
/// caller's thread (the Sync engine) or a thread-pool thread. <see cref="Dispose"/> waits until the kernel
/// is done with every operation in flight and its callback has been called, then closes the segments;
/// later operations fail with an error code.</para>
/// </remarks>
public sealed class SpindleDevice : StorageDeviceBase
{
    /// <summary>The throttle limit FASTER's own local devices use.</summary>
    public const int DefaultThrottleLimit = 120;

    private static readonly ConcurrentDictionary<string, uint> s_sectorSizes = new(); // direct-I/O alignment by directory, probed once

    private readonly ConcurrentDictionary<int, SafeFileHandle> _segments = new(); // open segment files by id (O_DIRECT when asked for and the file system allows it)
    private readonly ConcurrentDictionary<int, SafeFileHandle> _buffered = new(); // buffered handles for misaligned requests, opened on first need
    private readonly SpindleDeviceOptions _options;
    private readonly object _openLock = new(); // serialises opening a segment, so each file is opened once
    private int _pending;                      // operations accepted whose I/O has not completed (callback not yet called)
    private volatile bool _disposed;           // set once by Dispose; later operations fail
    private readonly object _drainGate = new(); // Dispose waits on it for _pending to reach 0

    /// <summary>Creates a device whose segment files are <c><paramref name="filename"/>.N</c>.</summary>
    /// <param name="filename">The path prefix of the segment files; its directory is created if missing.</param>
    /// <param name="options">How to open and drive the segment files; null for the defaults.</param>
    /// <exception cref="ArgumentException"><paramref name="filename"/> is empty.</exception>
    /// <exception cref="IOException">The directory cannot be created or probed.</exception>
    public SpindleDevice(string filename, SpindleDeviceOptions? options = null)
        : base(filename, SectorSizeFor(filename, options ?? SpindleDeviceOptions.Default), (options ?? SpindleDeviceOptions.Default).Capacity)
    {
        _options = options ?? SpindleDeviceOptions.Default;
        IsDirectIO = _options.DirectIO;
        ThrottleLimit = DefaultThrottleLimit;
        if (_options.RecoverDevice)
        {
            RecoverSegmentRange();
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
    public bool IsDirectIO { get; private set; }

    /// <summary>Operations accepted and not yet completed.</summary>
    public int PendingOperations => Volatile.Read(ref _pending);

    /// <inheritdoc/>
    public override bool Throttle() => Volatile.Read(ref _pending) > ThrottleLimit;

    /// <inheritdoc/>
    /// <remarks>Completions are delivered by Spindle's engines as they happen; there is nothing to poll.</remarks>
    public override bool TryComplete() => true;

    /// <inheritdoc/>
    public override void ReadAsync(int segmentId, ulong sourceAddress, IntPtr destinationAddress, uint readLength, DeviceIOCompletionCallback callback, object context)
    {
        NativeMemoryOperation operation = NativeMemoryOperation.Rent(this, destinationAddress, readLength, callback, context);
        if (!TryBegin(segmentId, IsAligned(destinationAddress, sourceAddress, readLength), operation, out SafeFileHandle? handle))
        {
            return;
        }
        operation.StartRead(handle, (long)sourceAddress, _options.Engine);
    }

    /// <inheritdoc/>
    public override void WriteAsync(IntPtr sourceAddress, int segmentId, ulong destinationAddress, uint numBytesToWrite, DeviceIOCompletionCallback callback, object context)
    {
        HandleCapacity(segmentId);
        NativeMemoryOperation operation = NativeMemoryOperation.Rent(this, sourceAddress, numBytesToWrite, callback, context);
        if (!TryBegin(segmentId, IsAligned(sourceAddress, destinationAddress, numBytesToWrite), operation, out SafeFileHandle? handle))
        {
            return;
        }
        operation.StartWrite(handle, (long)destinationAddress, WriteEngine, durable: _options.WriteThrough && _options.DataSyncWrites);
    }

    /// <inheritdoc/>
    /// <remarks>
    /// The segment's handle is closed at once; operations still in flight on it keep the descriptor open
    /// until the kernel completes them (Spindle references the handle per operation). Then the file is deleted.
    /// </remarks>
    public override void RemoveSegment(int segment)
    {
        if (_segments.TryRemove(segment, out SafeFileHandle? handle))
        {
            handle.Dispose();
        }
        if (_buffered.TryRemove(segment, out SafeFileHandle? buffered))
        {
            buffered.Dispose();
        }
        try
        {
            File.Delete(SegmentPath(segment));
        }
        catch (IOException)
        {
            // FASTER's devices treat a segment that cannot be deleted as already gone.
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
    /// <remarks>Closes every segment file (deleting it with <see cref="SpindleDeviceOptions.DeleteOnClose"/>).</remarks>
    public override void Reset()
    {
        CloseSegments();
    }

    /// <summary>
    /// Waits until every operation in flight has completed (the kernel is done with its memory and its
    /// callback has been called; FASTER may dispose a device from inside a callback), then closes the
    /// segment files (deleting them with <see cref="SpindleDeviceOptions.DeleteOnClose"/>). Operations issued
    /// afterwards complete at once with an error code.
    /// </summary>
    public override void Dispose()
    {
        if (_disposed)
        {
            return;
        }
        _disposed = true;
        lock (_drainGate)
        {
            // A completion that saw _disposed false decremented before this read (both sides fence).
            while (Volatile.Read(ref _pending) != 0)
            {
                // Completions run inline on the thread that reaps them, and FASTER may dispose from inside one: this
                // thread may be the one that would reap the rest, so it takes them itself while it waits.
                if (SpindleRandomAccess.PollCompletions() == 0)
                {
                    Monitor.Wait(_drainGate, millisecondsTimeout: 1);
                }
            }
        }
        CloseSegments();
    }

    internal void OperationCompleted()
    {
        if (Interlocked.Decrement(ref _pending) == 0 && _disposed)
        {
            lock (_drainGate)
            {
                Monitor.PulseAll(_drainGate);
            }
        }
    }

    /// <summary>
    /// Whether a request meets O_DIRECT's alignment. FASTER's log pages always do, but some of its
    /// metadata writes and reads (commit and checkpoint records) use buffers at arbitrary addresses;
    /// those go through a buffered handle on the same file (the kernel keeps the two coherent:
    /// direct I/O writes back and invalidates cached pages of its range first).
    /// </summary>
    private bool IsAligned(IntPtr memory, ulong offset, uint length)
    {
        ulong mask = SectorSize - 1;
        return (((ulong)memory | offset | length) & mask) == 0;
    }

    private bool TryBegin(int segmentId, bool aligned, NativeMemoryOperation operation, [System.Diagnostics.CodeAnalysis.NotNullWhen(true)] out SafeFileHandle? handle)
    {
        Interlocked.Increment(ref _pending);
        handle = null;
        try
        {
            // Checked after counting, so Dispose either sees this operation or the operation sees Dispose.
            ObjectDisposedException.ThrowIf(_disposed, this);
            handle = aligned || !_options.DirectIO ? SegmentHandle(segmentId) : BufferedHandle(segmentId);
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

    private SafeFileHandle BufferedHandle(int segmentId)
    {
        if (_buffered.TryGetValue(segmentId, out SafeFileHandle? handle))
        {
            return handle;
        }
        lock (_openLock)
        {
            if (!_buffered.TryGetValue(segmentId, out handle))
            {
                SegmentHandle(segmentId); // creates the file as a segment (preallocated) if it is new
                handle = SpindleFile.OpenHandle(SegmentPath(segmentId), new SpindleFileOptions
                {
                    Mode = FileMode.Open,
                    Access = FileAccess.ReadWrite,
                    Share = FileShare.ReadWrite | FileShare.Delete,
                    Options = OpenOptions,
                });
                _buffered[segmentId] = handle;
            }
            return handle;
        }
    }

    // Write-through opens O_SYNC, unless each write is made durable on its own (DataSyncWrites).
    private FileOptions OpenOptions => _options.WriteThrough && !_options.DataSyncWrites ? FileOptions.WriteThrough : FileOptions.None;

    private SafeFileHandle OpenSegment(int segmentId)
    {
        string path = SegmentPath(segmentId);
        var open = new SpindleFileOptions
        {
            Mode = FileMode.OpenOrCreate,
            Access = FileAccess.ReadWrite,
            Share = FileShare.ReadWrite | FileShare.Delete,
            // Write-through, as FASTER's devices open their files: a completed write is on the device.
            Options = OpenOptions,
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
                // Another process created it first: open what is there.
                open.Mode = FileMode.OpenOrCreate;
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
        foreach (int segment in _buffered.Keys)
        {
            if (_buffered.TryRemove(segment, out SafeFileHandle? buffered))
            {
                buffered.Dispose();
            }
        }
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

    private static uint SectorSizeFor(string filename, SpindleDeviceOptions options)
    {
        ArgumentException.ThrowIfNullOrEmpty(filename);
        string directory = Path.GetDirectoryName(Path.GetFullPath(filename))!;
        Directory.CreateDirectory(directory);
        if (options.SectorSize is uint requested)
        {
            return requested;
        }
        // FASTER creates a device per commit record and per checkpoint file, so the probe runs once per
        // directory: a scratch file created and deleted per device cost two metadata updates per commit.
        return s_sectorSizes.GetOrAdd(directory, ProbeSectorSize);
    }

    private static uint ProbeSectorSize(string directory)
    {
        // The alignment O_DIRECT needs on this file system, read from a scratch file beside the segments.
        string probe = Path.Combine(directory, $".spindle-device-probe-{Environment.ProcessId}-{Guid.NewGuid():N}");
        using SafeFileHandle handle = SpindleFile.OpenHandle(probe, new SpindleFileOptions
        {
            Mode = FileMode.CreateNew,
            Access = FileAccess.ReadWrite,
            Options = FileOptions.DeleteOnClose,
        });
        DirectIOAlignment alignment = SpindleFile.GetDirectIOAlignment(handle);
        return (uint)Math.Max(512, Math.Max(alignment.MemoryAlignment, alignment.OffsetAlignment));
    }
}
