namespace Spindle.Engines.IoUring;

/// <summary>
/// The engine's operations: a pool per kind, and the table of slots a CQE's user data names. Apart from the engine, so
/// that loading the engine's type (before Spindle's dependencies may be loaded) loads none of theirs.
/// </summary>
internal sealed class RingOperations(IoUringEngine engine)
{
    private readonly Lock _tableLock = new();
    private RingOperation?[] _table = new RingOperation?[64]; // slot id → operation of any kind, replaced when it grows
    private int _count;                                        // slots ever handed out (the table's high-water mark)
    private readonly Stack<int> _freeSlots = new();            // slots of operations a full pool let go, reused first

    internal OperationPool<RingTransfer> Transfers { get; } = new(4096);

    internal OperationPool<RingSync> Syncs { get; } = new(256); // syncs and durable writes

    internal OperationPool<RingOpenAt> Opens { get; } = new(256); // opens and closes

    /// <summary>Slots whose operation is alive (pooled or in use); what a burst beyond the pool leaves behind is freed.</summary>
    internal int LiveSlots
    {
        get
        {
            lock (_tableLock)
            {
                return _count - _freeSlots.Count;
            }
        }
    }

    /// <summary>A pooled operation of one kind, or a new one in a slot of the table.</summary>
    internal T Rent<T>(OperationPool<T> pool, bool mayBlock)
        where T : RingOperation, IRingOperationKind<T>
    {
        T operation = pool.TryRent() ?? Create<T>();
        operation.MayBlock = mayBlock;
        operation.Inline = InlineCompletions.Active;
        return operation;
    }

    /// <summary>The operation in a slot (the thread that drives the ring, for a CQE's user data).</summary>
    internal RingOperation? Lookup(int id)
    {
        RingOperation?[] table = Volatile.Read(ref _table);
        return (uint)id < (uint)table.Length ? table[id] : null;
    }

    /// <summary>Pools a finished operation, or retires it when its pool is full so that its slot and memory are freed.</summary>
    internal void Return(RingOperation operation)
    {
        if (!operation.ReturnToPool())
        {
            Retire(operation);
        }
    }

    /// <summary>An operation whose preparation failed with <paramref name="failure"/>: lets go of what it holds, pools it, and returns the failure.</summary>
    internal Exception Abandon(RingOperation operation, Exception failure)
    {
        operation.ReleaseResources();
        Return(operation);
        return failure;
    }

    // Only operations the kernel is done with come here, so no CQE can name the slot until it is reused.
    private void Retire(RingOperation operation)
    {
        operation.FreeNativeMemory();
        lock (_tableLock)
        {
            _table[operation.Id] = null;
            _freeSlots.Push(operation.Id);
        }
    }

    private T Create<T>()
        where T : RingOperation, IRingOperationKind<T>
    {
        lock (_tableLock)
        {
            int id = _freeSlots.Count > 0 ? _freeSlots.Pop() : _count++;
            RingOperation?[] table = _table;
            if (id == table.Length)
            {
                Array.Resize(ref table, table.Length * 2);
            }
            T operation = T.Create(engine, id);
            table[id] = operation;
            // Publish the (possibly new) table before the operation can reach the ring thread.
            Volatile.Write(ref _table, table);
            return operation;
        }
    }
}
