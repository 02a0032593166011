using System.Buffers;
using System.Collections.Concurrent;
using System.Runtime.CompilerServices;
using FASTER.core;
using Microsoft.Win32.SafeHandles;

namespace Spindle.Faster;

/// <summary>
/// One read or write of <see cref="SpindleDevice"/>: a <see cref="MemoryManager{T}"/> over FASTER's native,
/// sector-aligned buffer (so Spindle reads and writes that memory in place, no copy), the completion
/// callback, and the continuation that calls it. Pooled: a steady stream of device I/O allocates nothing.
/// </summary>
/// <remarks>
/// Lifetime: the device rents an operation, starts it, and the operation returns itself to the pool
/// once Spindle's task completed (Spindle completes only once the kernel let go of the memory),
/// just before FASTER's callback runs. Nothing else touches it in between, so its fields need no locks.
/// </remarks>
internal sealed unsafe class NativeMemoryOperation : MemoryManager<byte>
{
    private static readonly ConcurrentQueue<NativeMemoryOperation> s_pool = new();
    private const int PoolLimit = 1024;
    private static int s_pooled; // how many operations s_pool holds (approximately; bounds the pool)

    private readonly Action _onReadCompleted; // cached continuations: no delegate per operation
    private readonly Action _onWriteCompleted;
    private byte* _pointer;                   // FASTER's buffer; owned by FASTER, valid until our callback
    private int _length;                      // bytes at _pointer
    private SpindleDevice? _device;           // the device that counts this operation in flight
    private DeviceIOCompletionCallback? _callback;
    private object? _context;
    private ConfiguredValueTaskAwaitable<int>.ConfiguredValueTaskAwaiter _readAwaiter;
    private ConfiguredValueTaskAwaitable.ConfiguredValueTaskAwaiter _writeAwaiter;

    private NativeMemoryOperation()
    {
        _onReadCompleted = OnReadCompleted;
        _onWriteCompleted = OnWriteCompleted;
    }

    internal static NativeMemoryOperation Rent(SpindleDevice device, IntPtr pointer, uint length, DeviceIOCompletionCallback callback, object context)
    {
        if (s_pool.TryDequeue(out NativeMemoryOperation? operation))
        {
            Interlocked.Decrement(ref s_pooled);
        }
        else
        {
            operation = new NativeMemoryOperation();
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
        ValueTask<int> task;
        try
        {
            // FASTER's callbacks only signal (a semaphore, a pending-request queue): they run on the thread that reaps
            // the completion instead of a pool thread.
            using (SpindleRandomAccess.RunCompletionsInline())
            {
                task = SpindleRandomAccess.ReadAsync(handle, Memory, offset, engine);
            }
        }
        catch (Exception e)
        {
            Complete(DeviceErrors.CodeFor(e), 0);
            return;
        }
        _readAwaiter = task.ConfigureAwait(false).GetAwaiter();
        if (_readAwaiter.IsCompleted)
        {
            OnReadCompleted();
        }
        else
        {
            _readAwaiter.UnsafeOnCompleted(_onReadCompleted);
        }
    }

    internal void StartWrite(SafeFileHandle handle, long offset, IoEngine engine, bool durable)
    {
        ValueTask task;
        try
        {
            using (SpindleRandomAccess.RunCompletionsInline()) // as for reads
            {
                task = durable
                    ? SpindleRandomAccess.WriteDurableAsync(handle, Memory, offset, engine)
                    : SpindleRandomAccess.WriteAsync(handle, Memory, offset, engine);
            }
        }
        catch (Exception e)
        {
            Complete(DeviceErrors.CodeFor(e), 0);
            return;
        }
        _writeAwaiter = task.ConfigureAwait(false).GetAwaiter();
        if (_writeAwaiter.IsCompleted)
        {
            OnWriteCompleted();
        }
        else
        {
            _writeAwaiter.UnsafeOnCompleted(_onWriteCompleted);
        }
    }

    /// <summary>Fails the operation before it reached Spindle (device disposed, segment could not be opened).</summary>
    internal void Fail(Exception error) => Complete(DeviceErrors.CodeFor(error), 0);

    private void OnReadCompleted()
    {
        var awaiter = _readAwaiter;
        _readAwaiter = default;
        uint code = 0;
        int read = 0;
        try
        {
            read = awaiter.GetResult();
        }
        catch (Exception e)
        {
            code = DeviceErrors.CodeFor(e);
        }
        Complete(code, (uint)read);
    }

    private void OnWriteCompleted()
    {
        var awaiter = _writeAwaiter;
        _writeAwaiter = default;
        uint code = 0;
        uint written = (uint)_length;
        try
        {
            awaiter.GetResult();
        }
        catch (Exception e)
        {
            code = DeviceErrors.CodeFor(e);
            written = 0;
        }
        Complete(code, written);
    }

    private void Complete(uint errorCode, uint bytes)
    {
        DeviceIOCompletionCallback callback = _callback!;
        object? context = _context;
        SpindleDevice device = _device!;
        _callback = null;
        _context = null;
        _device = null;
        _pointer = null;
        _length = 0;
        // Back to the pool before the callback: FASTER may issue the next I/O from inside it.
        if (Interlocked.Increment(ref s_pooled) <= PoolLimit)
        {
            s_pool.Enqueue(this);
        }
        else
        {
            Interlocked.Decrement(ref s_pooled);
        }
        // Counted out before the callback: FASTER may dispose the device from inside a callback (its
        // recovery does, through a synchronous continuation), and Dispose waits for the count.
        device.OperationCompleted();
        callback(errorCode, bytes, context);
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
