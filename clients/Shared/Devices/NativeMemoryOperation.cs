using System.Buffers;
using System.Collections.Concurrent;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;

namespace Spindle.Clients.Devices;

/// <summary>
/// One read or write of a device: a <see cref="MemoryManager{T}"/> over the caller's native, sector-aligned buffer
/// (Spindle reads and writes that memory in place, no copy), the completion callback, and the continuation that
/// calls it. Pooled: a steady stream of device I/O allocates nothing.
/// </summary>
/// <remarks>
/// Lifetime: the device rents an operation, counts it in and starts it; the operation returns itself to the pool once
/// Spindle's task completed (Spindle completes only once the kernel let go of the memory), just before the callback
/// runs, and is counted out after the callback returned (<see cref="InFlightOperations.RunCallback"/>). Nothing else
/// touches it in between, so its fields need no locks.
/// </remarks>
internal sealed unsafe class NativeMemoryOperation : MemoryManager<byte>
{
    private static readonly ConcurrentQueue<NativeMemoryOperation> s_pool = new();
    private const int PoolLimit = 1024;
    private static int s_pooled; // how many operations s_pool holds (approximately; bounds the pool)

    private readonly Action _onReadCompleted;  // cached continuations: no delegate per operation
    private readonly Action _onWriteCompleted;
    private byte* _pointer;                    // the caller's buffer; owned by the caller, valid until the callback
    private int _length;                       // bytes at _pointer
    private InFlightOperations? _inFlight;     // the device's count this operation is in
    private object? _callback;                 // the device's completion callback (DeviceCallback invokes it)
    private object? _context;
    private ConfiguredValueTaskAwaitable<int>.ConfiguredValueTaskAwaiter _readAwaiter;
    private ConfiguredValueTaskAwaitable.ConfiguredValueTaskAwaiter _writeAwaiter;

    private NativeMemoryOperation()
    {
        _onReadCompleted = OnReadCompleted;
        _onWriteCompleted = OnWriteCompleted;
    }

    internal static NativeMemoryOperation Rent(InFlightOperations inFlight, IntPtr pointer, uint length, object callback, object? context)
    {
        if (s_pool.TryDequeue(out NativeMemoryOperation? operation))
        {
            Interlocked.Decrement(ref s_pooled);
        }
        else
        {
            operation = new NativeMemoryOperation();
        }
        operation._inFlight = inFlight;
        operation._pointer = (byte*)pointer;
        operation._length = checked((int)length);
        operation._callback = callback;
        operation._context = context;
        return operation;
    }

    /// <summary>
    /// Counts the operation in and finds the segment's file (the buffered handle when <paramref name="buffered"/>);
    /// when the device is closed or the file cannot be opened, completes the operation with that error instead.
    /// </summary>
    internal bool TryBegin(SegmentFiles files, int segmentId, long segmentSize, bool buffered, [NotNullWhen(true)] out SafeFileHandle? handle)
    {
        handle = null;
        try
        {
            _inFlight!.Begin();
            handle = buffered ? files.GetBuffered(segmentId, segmentSize) : files.Get(segmentId, segmentSize);
            return true;
        }
        catch (Exception e)
        {
            Fail(e);
            return false;
        }
    }

    /// <summary>Starts the read; <paramref name="inline"/> runs the callback on the thread that reaps the completion (callbacks that only signal).</summary>
    internal void StartRead(SafeFileHandle handle, long offset, IoEngine engine, bool inline)
    {
        ValueTask<int> read;
        try
        {
            if (inline)
            {
                using (SpindleRandomAccess.RunCompletionsInline())
                {
                    read = SpindleRandomAccess.ReadAsync(handle, Memory, offset, engine);
                }
            }
            else
            {
                read = SpindleRandomAccess.ReadAsync(handle, Memory, offset, engine);
            }
        }
        catch (Exception e)
        {
            Fail(e);
            return;
        }
        _readAwaiter = read.ConfigureAwait(false).GetAwaiter();
        if (_readAwaiter.IsCompleted)
        {
            OnReadCompleted();
        }
        else
        {
            _readAwaiter.UnsafeOnCompleted(_onReadCompleted);
        }
    }

    /// <summary>Starts the write (made durable on its own when <paramref name="durable"/>); <paramref name="inline"/> as for reads.</summary>
    internal void StartWrite(SafeFileHandle handle, long offset, IoEngine engine, bool durable, bool inline)
    {
        ValueTask write;
        try
        {
            if (inline)
            {
                using (SpindleRandomAccess.RunCompletionsInline())
                {
                    write = Write(handle, offset, engine, durable);
                }
            }
            else
            {
                write = Write(handle, offset, engine, durable);
            }
        }
        catch (Exception e)
        {
            Fail(e);
            return;
        }
        _writeAwaiter = write.ConfigureAwait(false).GetAwaiter();
        if (_writeAwaiter.IsCompleted)
        {
            OnWriteCompleted();
        }
        else
        {
            _writeAwaiter.UnsafeOnCompleted(_onWriteCompleted);
        }
    }

    /// <summary>Fails the operation before it reached Spindle (device closed, segment could not be opened).</summary>
    internal void Fail(Exception error) => Complete(DeviceErrors.CodeFor(error), 0, error);

    private ValueTask Write(SafeFileHandle handle, long offset, IoEngine engine, bool durable)
        => durable
            ? SpindleRandomAccess.WriteDurableAsync(handle, Memory, offset, engine)
            : SpindleRandomAccess.WriteAsync(handle, Memory, offset, engine);

    private void OnReadCompleted()
    {
        var awaiter = _readAwaiter;
        _readAwaiter = default;
        int read;
        try
        {
            read = awaiter.GetResult();
        }
        catch (Exception e)
        {
            Complete(DeviceErrors.CodeFor(e), 0, e);
            return;
        }
        Complete(0, (uint)read, null);
    }

    private void OnWriteCompleted()
    {
        var awaiter = _writeAwaiter;
        _writeAwaiter = default;
        try
        {
            awaiter.GetResult();
        }
        catch (Exception e)
        {
            Complete(DeviceErrors.CodeFor(e), 0, e);
            return;
        }
        Complete(0, (uint)_length, null);
    }

    private void Complete(uint errorCode, uint bytes, Exception? error)
    {
        object callback = _callback!;
        object? context = _context;
        InFlightOperations inFlight = _inFlight!;
        _callback = null;
        _context = null;
        _inFlight = null;
        _pointer = null;
        _length = 0;
        // Back to the pool before the callback: the caller may issue the next I/O from inside it.
        if (Interlocked.Increment(ref s_pooled) <= PoolLimit)
        {
            s_pool.Enqueue(this);
        }
        else
        {
            Interlocked.Decrement(ref s_pooled);
        }
        // Counted out only after the callback returned, so closing the device returns after every callback.
        inFlight.RunCallback(callback, errorCode, bytes, context, error);
    }

    /// <inheritdoc/>
    public override Span<byte> GetSpan() => new(_pointer, _length);

    /// <inheritdoc/>
    public override MemoryHandle Pin(int elementIndex = 0) => new(_pointer + elementIndex); // native memory never moves

    /// <inheritdoc/>
    public override void Unpin()
    {
    }

    /// <inheritdoc/>
    protected override void Dispose(bool disposing)
    {
    }
}

/// <summary>
/// The error code a device's completion callback receives: the low 16 bits of an <see cref="IOException"/>'s HResult
/// (what FASTER's and Garnet's managed devices report), else <see cref="uint.MaxValue"/>.
/// </summary>
internal static class DeviceErrors
{
    internal static uint CodeFor(Exception error)
    {
        if ((error as IOException ?? error.InnerException as IOException) is { } io && (io.HResult & 0xFFFF) != 0)
        {
            return (uint)(io.HResult & 0xFFFF);
        }
        return uint.MaxValue;
    }
}
