namespace Spindle.Clients.Devices;

/// <summary>
/// A device's operations between acceptance and the return of their callback: counted in before anything is issued,
/// counted out only after the callback returned, so that closing the device (<see cref="CloseAndDrain"/>) returns
/// once the kernel is done with every buffer and no callback of the device still runs.
/// </summary>
/// <remarks>
/// FASTER and Tsavorite may dispose a device from inside one of its callbacks (recovery does, through a synchronous
/// continuation): the callbacks on the closing thread's own stack cannot return before the close does, so they are
/// not waited for; every other one is. Which device's callbacks a thread is inside, and how deep, is kept per thread.
/// </remarks>
internal sealed class InFlightOperations
{
    private readonly object _device;          // named by the ObjectDisposedException of operations after the close
    private readonly object _drainGate = new(); // the close waits on it for the count to drop to its own callbacks
    private int _count;                       // operations accepted whose callback has not returned yet
    private int _closed;                      // 1 once CloseAndDrain began; later operations fail

    [ThreadStatic]
    private static InFlightOperations? t_callbackOwner; // the device whose callback this thread is running, if any
    [ThreadStatic]
    private static int t_callbackDepth;                 // how many of that device's callbacks are on this thread's stack

    internal InFlightOperations(object device) => _device = device;

    /// <summary>Operations accepted whose callback has not returned yet.</summary>
    internal int Count => Volatile.Read(ref _count);

    /// <summary>Counts an operation in.</summary>
    /// <exception cref="ObjectDisposedException">The device is closed; the operation is counted in all the same, and its failure must be completed (<see cref="RunCallback"/>).</exception>
    internal void Begin()
    {
        Interlocked.Increment(ref _count);
        // Checked after counting, so the close either sees this operation or the operation sees the close.
        ObjectDisposedException.ThrowIf(Volatile.Read(ref _closed) != 0, _device);
    }

    /// <summary>Calls an operation's callback, then counts the operation out (waking a close that waits for it).</summary>
    internal void RunCallback(object callback, uint errorCode, uint bytes, object? context, Exception? error)
    {
        // A callback may start an operation that completes at once and calls its own callback (nesting), maybe of another device.
        InFlightOperations? outerOwner = t_callbackOwner;
        int outerDepth = t_callbackDepth;
        if (outerOwner != this)
        {
            t_callbackOwner = this;
            t_callbackDepth = 0;
        }
        t_callbackDepth++;
        try
        {
            DeviceCallback.Invoke(callback, errorCode, bytes, context, error);
        }
        finally
        {
            t_callbackOwner = outerOwner;
            t_callbackDepth = outerDepth;
            Interlocked.Decrement(ref _count);
            if (Volatile.Read(ref _closed) != 0)
            {
                // The close may wait for a count above 0 (its own callbacks), so every decrement wakes it.
                lock (_drainGate)
                {
                    Monitor.PulseAll(_drainGate);
                }
            }
        }
    }

    /// <summary>
    /// Closes the device to new operations and waits until every operation in flight has had its callback return,
    /// except the callbacks on this thread's own stack.
    /// </summary>
    /// <returns>False when the device was closed already (nothing was waited for).</returns>
    internal bool CloseAndDrain()
    {
        // A full fence, so that an operation counted in before this either is seen below or sees the close.
        if (Interlocked.Exchange(ref _closed, 1) != 0)
        {
            return false;
        }
        int ownCallbacks = t_callbackOwner == this ? t_callbackDepth : 0;
        // A completion that saw the device open decremented before this read (both sides fence).
        while (Volatile.Read(ref _count) > ownCallbacks)
        {
            // Completions may run inline on the thread that reaps them, and a close from inside a callback may run on
            // that very thread: it takes the rest itself while it waits, instead of waiting for itself. Polled outside
            // the gate, which a callback ending on the reaping thread takes.
            if (SpindleRandomAccess.PollCompletions() > 0)
            {
                continue;
            }
            lock (_drainGate)
            {
                if (Volatile.Read(ref _count) > ownCallbacks)
                {
                    Monitor.Wait(_drainGate, millisecondsTimeout: 1);
                }
            }
        }
        return true;
    }
}
