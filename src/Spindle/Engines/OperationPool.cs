namespace Spindle.Engines;

/// <summary>
/// A bounded stack of reusable operation objects. Renting and returning never allocate; the lock is
/// held for a few instructions, which costs less than a lock-free structure on the small core counts
/// file I/O runs on.
/// </summary>
internal sealed class OperationPool<T> where T : class
{
    private readonly T?[] _items;  // the free objects, _items[0.._count)
    private readonly Lock _lock = new();
    private int _count;            // how many free objects the stack holds

    internal OperationPool(int capacity) => _items = new T?[capacity];

    /// <summary>A free object, or null when the pool is empty.</summary>
    internal T? TryRent()
    {
        lock (_lock)
        {
            if (_count == 0)
            {
                return null;
            }
            T? item = _items[--_count];
            _items[_count] = null;
            return item;
        }
    }

    /// <summary>Keeps the object for reuse; false when the pool is full and the caller must let it go.</summary>
    internal bool Return(T item)
    {
        lock (_lock)
        {
            if (_count < _items.Length)
            {
                _items[_count++] = item;
                return true;
            }
            return false;
        }
    }
}
