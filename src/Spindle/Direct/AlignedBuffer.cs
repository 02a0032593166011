using System.Buffers;

namespace Spindle;

/// <summary>
/// One rented buffer of an <see cref="AlignedMemoryPool"/>: native memory that never moves, so that
/// pinning is free and the address the alignment check saw is the one the kernel gets.
/// </summary>
internal sealed unsafe class AlignedBuffer : MemoryManager<byte>
{
    private readonly AlignedMemoryPool _pool;
    private readonly int _length;
    private nint _pointer; // 0 once returned to the pool

    internal AlignedBuffer(AlignedMemoryPool pool, byte* pointer, int length)
    {
        _pool = pool;
        _pointer = (nint)pointer;
        _length = length;
    }

    public override Span<byte> GetSpan()
    {
        ObjectDisposedException.ThrowIf(_pointer == 0, this);
        return new Span<byte>((byte*)_pointer, _length);
    }

    public override MemoryHandle Pin(int elementIndex = 0)
    {
        ObjectDisposedException.ThrowIf(_pointer == 0, this);
        ArgumentOutOfRangeException.ThrowIfNegative(elementIndex);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(elementIndex, _length);
        return new MemoryHandle((byte*)_pointer + elementIndex);
    }

    public override void Unpin()
    {
        // Native memory is never moved; nothing to release.
    }

    protected override void Dispose(bool disposing)
    {
        // Exactly one disposal returns the block, even when two threads race.
        nint pointer = Interlocked.Exchange(ref _pointer, 0);
        if (pointer != 0)
        {
            _pool.Return((byte*)pointer, _length);
        }
    }
}
