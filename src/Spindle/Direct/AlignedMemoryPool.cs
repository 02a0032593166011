using System.Buffers;
using System.Collections.Concurrent;
using System.Numerics;
using System.Runtime.InteropServices;
using Spindle.Diagnostics;

namespace Spindle;

/// <summary>
/// A pool of native buffers whose addresses and lengths are multiples of an alignment, as unbuffered
/// (<c>O_DIRECT</c>) I/O requires. <see cref="Rent"/> returns an owner; disposing it returns the
/// buffer to the pool, after which its memory must not be used.
/// </summary>
/// <remarks>
/// Lengths are rounded up to a power of two (at least the alignment); up to
/// <see cref="BuffersKeptPerSize"/> free buffers of each size up to <see cref="LargestPooledSize"/> are
/// kept, larger ones are freed on return. An owner must be disposed: native memory has no finalizer,
/// because a span over it could outlive the owner.
/// </remarks>
public sealed unsafe class AlignedMemoryPool : MemoryPool<byte>
{
    // The pool's tuning as constants for its own arithmetic; callers read the properties, so that a later version
    // may change a value without recompiling them.
    internal const int LargestPooled = 16 << 20;
    private const int KeptPerSize = 16;

    /// <summary>The largest buffer kept for reuse; larger rentals are allocated and freed each time.</summary>
    public static int LargestPooledSize => LargestPooled;

    /// <summary>How many free buffers of one size the pool keeps.</summary>
    public static int BuffersKeptPerSize => KeptPerSize;

    private const int DefaultRentSize = 64 << 10;

    // One stack of free blocks per power-of-two size, from the alignment up to LargestPooledSize.
    private readonly ConcurrentStack<nint>[] _free;
    private readonly int _smallestShift; // log2 of the smallest size: _free[i] holds blocks of 1 << (_smallestShift + i) bytes
    private int _disposed;               // 1 once disposed: returned blocks are freed instead of kept

    /// <summary>A process-wide pool with 4096-byte alignment, which satisfies every common O_DIRECT requirement.</summary>
    public static new AlignedMemoryPool Shared { get; } = new(4096);

    /// <summary>Creates a pool whose buffers are aligned to <paramref name="alignment"/> bytes.</summary>
    /// <param name="alignment">A power of two from 1 to 1 MiB; use the <see cref="DirectIOAlignment"/> of the file, or 4096.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="alignment"/> is not a power of two in range.</exception>
    public AlignedMemoryPool(int alignment)
    {
        if (alignment <= 0 || alignment > 1 << 20 || !BitOperations.IsPow2(alignment))
        {
            throw new ArgumentOutOfRangeException(nameof(alignment), alignment, "The alignment must be a power of two from 1 to 1048576.");
        }
        Alignment = alignment;
        _smallestShift = BitOperations.Log2((uint)alignment);
        int sizes = BitOperations.Log2(LargestPooled) - _smallestShift + 1;
        _free = new ConcurrentStack<nint>[Math.Max(sizes, 1)];
        for (int i = 0; i < _free.Length; i++)
        {
            _free[i] = new ConcurrentStack<nint>();
        }
    }

    /// <summary>The alignment of every buffer's address and length, in bytes.</summary>
    public int Alignment { get; }

    /// <summary>The largest buffer that can be rented.</summary>
    public override int MaxBufferSize => 1 << 30;

    /// <summary>Rents a buffer of at least <paramref name="minBufferSize"/> bytes (64 KiB for -1).</summary>
    /// <param name="minBufferSize">The smallest acceptable length, or -1 for the default.</param>
    /// <returns>An owner whose <see cref="IMemoryOwner{T}.Memory"/> is aligned; dispose it to return the buffer.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="minBufferSize"/> is below -1 or above <see cref="MaxBufferSize"/>.</exception>
    /// <exception cref="ObjectDisposedException">The pool is disposed.</exception>
    public override IMemoryOwner<byte> Rent(int minBufferSize = -1)
    {
        if (minBufferSize < -1 || minBufferSize > MaxBufferSize)
        {
            throw new ArgumentOutOfRangeException(nameof(minBufferSize), minBufferSize, $"The size must be from -1 to {MaxBufferSize}.");
        }
        ObjectDisposedException.ThrowIf(_disposed != 0, this);
        int size = (int)BitOperations.RoundUpToPowerOf2((uint)Math.Max(minBufferSize == -1 ? DefaultRentSize : minBufferSize, Alignment));
        int bucket = Bucket(size);
        EngineProbe.Current?.PoolBuffers(this, 1);
        if (bucket < _free.Length && _free[bucket].TryPop(out nint block))
        {
            return new AlignedBuffer(this, (byte*)block, size);
        }
        return new AlignedBuffer(this, (byte*)NativeMemory.AlignedAlloc((nuint)size, (nuint)Alignment), size);
    }

    /// <summary>Takes a block back from an owner being disposed.</summary>
    internal void Return(byte* block, int size)
    {
        EngineProbe.Current?.PoolBuffers(this, -1);
        int bucket = Bucket(size);
        if (_disposed == 0 && bucket < _free.Length && _free[bucket].Count < KeptPerSize)
        {
            _free[bucket].Push((nint)block);
            return;
        }
        NativeMemory.AlignedFree(block);
    }

    /// <summary>
    /// Frees the pooled buffers; buffers still rented are freed when their owners are disposed. Disposing
    /// <see cref="Shared"/> does nothing, as for <see cref="MemoryPool{T}.Shared"/>: the process's direct streams rent from it.
    /// </summary>
    /// <param name="disposing">Whether called from <see cref="IDisposable.Dispose"/>.</param>
    protected override void Dispose(bool disposing)
    {
        if (ReferenceEquals(this, Shared) || Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }
        foreach (ConcurrentStack<nint> stack in _free)
        {
            while (stack.TryPop(out nint block))
            {
                NativeMemory.AlignedFree((void*)block);
            }
        }
    }

    private int Bucket(int size) => BitOperations.Log2((uint)size) - _smallestShift;
}
