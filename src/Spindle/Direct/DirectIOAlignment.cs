using System.Numerics;

namespace Spindle;

/// <summary>
/// What unbuffered (<c>O_DIRECT</c>) I/O on a file requires: buffer addresses that are multiples of
/// <see cref="MemoryAlignment"/>, and file offsets and lengths that are multiples of <see cref="OffsetAlignment"/>.
/// </summary>
public readonly record struct DirectIOAlignment
{
    private readonly int _memoryAlignment; // a positive power of two (0 only in default(DirectIOAlignment))
    private readonly int _offsetAlignment; // a positive power of two (0 only in default(DirectIOAlignment))

    /// <summary>Creates an alignment requirement.</summary>
    /// <param name="memoryAlignment">The alignment of a buffer's address, in bytes: a power of two.</param>
    /// <param name="offsetAlignment">The alignment of a file offset and of a transfer's length, in bytes: a power of two.</param>
    /// <exception cref="ArgumentOutOfRangeException">A value is not a positive power of two.</exception>
    public DirectIOAlignment(int memoryAlignment, int offsetAlignment)
    {
        _memoryAlignment = Validate(memoryAlignment, nameof(memoryAlignment));
        _offsetAlignment = Validate(offsetAlignment, nameof(offsetAlignment));
    }

    /// <summary>The alignment of a buffer's address, in bytes (a power of two).</summary>
    /// <exception cref="ArgumentOutOfRangeException">(init) The value is not a positive power of two.</exception>
    public int MemoryAlignment
    {
        get => _memoryAlignment;
        init => _memoryAlignment = Validate(value, nameof(MemoryAlignment));
    }

    /// <summary>The alignment of a file offset and of a transfer's length, in bytes (a power of two).</summary>
    /// <exception cref="ArgumentOutOfRangeException">(init) The value is not a positive power of two.</exception>
    public int OffsetAlignment
    {
        get => _offsetAlignment;
        init => _offsetAlignment = Validate(value, nameof(OffsetAlignment));
    }

    /// <summary>Deconstructs into the two alignments.</summary>
    /// <param name="memoryAlignment">Receives <see cref="MemoryAlignment"/>.</param>
    /// <param name="offsetAlignment">Receives <see cref="OffsetAlignment"/>.</param>
    public void Deconstruct(out int memoryAlignment, out int offsetAlignment)
    {
        memoryAlignment = _memoryAlignment;
        offsetAlignment = _offsetAlignment;
    }

    private static int Validate(int alignment, string name) => alignment > 0 && BitOperations.IsPow2(alignment)
        ? alignment
        : throw new ArgumentOutOfRangeException(name, alignment, "The alignment must be a positive power of two.");

    /// <summary>Whether an address is a multiple of <see cref="MemoryAlignment"/>.</summary>
    /// <param name="address">The address of a buffer.</param>
    /// <returns>True when the address is aligned.</returns>
    public bool IsAligned(nuint address) => (address & (nuint)(MemoryAlignment - 1)) == 0;

    /// <summary>Whether an offset or a length is a multiple of <see cref="OffsetAlignment"/>.</summary>
    /// <param name="value">A file offset or a byte count.</param>
    /// <returns>True when the value is aligned.</returns>
    public bool IsAligned(long value) => (value & (OffsetAlignment - 1)) == 0;

    /// <summary>The smallest multiple of <see cref="OffsetAlignment"/> at or above <paramref name="value"/>.</summary>
    /// <param name="value">A non-negative offset or length.</param>
    /// <returns>The rounded-up value.</returns>
    public long AlignUp(long value) => (value + OffsetAlignment - 1) & ~(long)(OffsetAlignment - 1);

    /// <summary>The largest multiple of <see cref="OffsetAlignment"/> at or below <paramref name="value"/>.</summary>
    /// <param name="value">A non-negative offset or length.</param>
    /// <returns>The rounded-down value.</returns>
    public long AlignDown(long value) => value & ~(long)(OffsetAlignment - 1);
}
