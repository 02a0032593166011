using System.Buffers;
using System.Collections.Concurrent;
using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;
using Tsavorite.core;

namespace Spindle.Garnet;

/// <summary>
/// One read or write of <see cref="SpindleStorageDevice"/>: a <see cref="MemoryManager{T}"/> over Tsavorite's
/// sector-aligned native buffer (Spindle reads and writes that memory in place, no copy), the completion callback,
/// and the continuation that calls it. Pooled: a steady stream of device I/O allocates nothing.
/// </summary>
/// <remarks>
/// Lifetime: the device rents an operation and starts it; the operation returns itself to the pool once Spindle's
/// task completed (Spindle completes only once the kernel let go of the memory), just before Tsavorite's callback
/// runs. Nothing else touches it in between, so its fields need no locks.
/// </remarks>
internal sealed unsafe class DeviceOperation : MemoryManager<byte>
{
    private static readonly ConcurrentQueue<DeviceOperation> s_pool = new();
    private const int PoolLimit = 1024;
    private static int s_pooled; // how many operations s_pool holds (approximately; bounds the pool)

    private readonly Action _onReadCompleted;  // cached continuations: no delegate per operation
    private readonly Action _onWriteCompleted;
    private byte* _pointer;                    // Tsavorite's buffer; owned by Tsavorite, valid until our callback
    private int _length;                       // bytes at _pointer
    private SpindleStorageDevice? _device;     // the device that counts this operation in flight
    private DeviceIOCompletionCallback? _callback;
    private object? _context;
    private ConfiguredValueTaskAwaitable<int>.ConfiguredValueTaskAwaiter _readAwaiter;
    private ConfiguredValueTaskAwaitable.ConfiguredValueTaskAwaiter _writeAwaiter;

    private DeviceOperation()
    {
        _onReadCompleted = OnReadCompleted;
        _onWriteCompleted = OnWriteCompleted;
    }

    internal static DeviceOperation Rent(SpindleStorageDevice device, IntPtr pointer, uint length, DeviceIOCompletionCallback callback, object context)
    {
        if (s_pool.TryDequeue(out DeviceOperation? operation))
        {
            Interlocked.Decrement(ref s_pooled);
        }
        else
        {
            operation = new DeviceOperation();
        }
        operation._device = device;
        operation._pointer = (byte*)pointer;
        operation._length = checked((int)length);
        operation._callback = callback;
        operation._context = context;
        return operation;
    }

    internal void StartRead(SafeFileHandle handle, long offset, IoEngine engine)
    {
        ValueTask<int> read;
        try
        {
            read = SpindleRandomAccess.ReadAsync(handle, Memory, offset, engine);
        }
        catch (Exception e)
        {
            Fail(e);
            return;
        }
        WhenDone(read);
    }

    internal void StartWrite(SafeFileHandle handle, long offset, IoEngine engine, bool durable)
    {
        ValueTask write;
        try
        {
            write = durable
                ? SpindleRandomAccess.WriteDurableAsync(handle, Memory, offset, engine)
                : SpindleRandomAccess.WriteAsync(handle, Memory, offset, engine);
        }
        catch (Exception e)
        {
            Fail(e);
            return;
        }
        WhenDone(write);
    }

    /// <summary>Fails the operation before it reached Spindle (device disposed, segment could not be opened).</summary>
    internal void Fail(Exception error) => Complete(DeviceErrors.CodeFor(error), 0, error);

    // The one place the device learns that an I/O finished: inline when the task is already done (every Sync
    // read), else a continuation Spindle's engine posts to the thread pool. A completion delivery that runs the
    // callback where the completion is reaped, or lets a waiting thread reap its own, plugs in here.
    private void WhenDone(ValueTask<int> read)
    {
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

    private void WhenDone(ValueTask write)
    {
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
        DeviceIOCompletionCallback callback = _callback!;
        object? context = _context;
        SpindleStorageDevice device = _device!;
        _callback = null;
        _context = null;
        _device = null;
        _pointer = null;
        _length = 0;
        // Back to the pool before the callback: Tsavorite may issue the next I/O from inside it.
        if (Interlocked.Increment(ref s_pooled) <= PoolLimit)
        {
            s_pool.Enqueue(this);
        }
        else
        {
            Interlocked.Decrement(ref s_pooled);
        }
        // Counted out only after the callback returned, so Dispose returns after every callback; a Dispose from
        // inside a callback does not wait for the callbacks on its own thread (CallbacksRunningHere).
        device.RunCallback(callback, errorCode, bytes, context, error);
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
/// The error code Tsavorite's completion callback receives: the low 16 bits of an <see cref="IOException"/>'s
/// HResult (what Garnet's managed devices report), else <see cref="uint.MaxValue"/>.
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
