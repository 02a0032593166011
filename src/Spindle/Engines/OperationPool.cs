namespace Spindle.Engines;

/// <summary>
/// A bounded pool of reusable operation objects; renting and returning never allocate. One small stack per core (up to
/// <see cref="EngineTunables.MaxPoolStripes"/>), each behind its own lock, so that no lock's cache line travels between
/// cores on every request; a thread looks at other cores' stacks only when its own is empty (or full).
/// </summary>
internal sealed class OperationPool<T> where T : class
{
    private readonly Stripe[] _stripes;

    internal OperationPool(int capacity)
    {
        int stripes = Math.Clamp(Environment.ProcessorCount, 1, EngineTunables.MaxPoolStripes);
        _stripes = new Stripe[stripes];
        for (int i = 0; i < stripes; i++)
        {
            _stripes[i] = new Stripe(Math.Max(1, capacity / stripes));
        }
    }

    /// <summary>A free object, or null when the pool is empty.</summary>
    internal T? TryRent()
    {
        for (int i = 0, home = Home(); i < _stripes.Length; i++)
        {
            if (_stripes[(home + i) % _stripes.Length].TryPop() is { } item)
            {
                return item;
            }
        }
        return null;
    }

    /// <summary>Keeps the object for reuse; false when the pool is full and the caller must let it go.</summary>
    internal bool Return(T item)
    {
        for (int i = 0, home = Home(); i < _stripes.Length; i++)
        {
            if (_stripes[(home + i) % _stripes.Length].TryPush(item))
            {
                return true;
            }
        }
        return false;
    }

    private int Home() => _stripes.Length == 1 ? 0 : Thread.GetCurrentProcessorId() % _stripes.Length;

    // One core's stack, padded so that two stripes' counts (and the locks in their object headers) never share a cache
    // line; a private object, so that locking on itself is safe.
    private sealed class Stripe(int capacity)
    {
        private readonly T?[] _items = new T?[capacity]; // the free objects, _items[0.._count)
        private int _count;
#pragma warning disable CS0169 // padding only
        private readonly long _pad0, _pad1, _pad2, _pad3, _pad4, _pad5;
#pragma warning restore CS0169

        internal T? TryPop()
        {
            lock (this)
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

        internal bool TryPush(T item)
        {
            lock (this)
            {
                if (_count == _items.Length)
                {
                    return false;
                }
                _items[_count++] = item;
                return true;
            }
        }
    }
}
