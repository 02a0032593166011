namespace Spindle;

/// <summary>
/// What unbuffered (<c>O_DIRECT</c>) I/O on a file requires: buffer addresses that are multiples of
/// <see cref="MemoryAlignment"/>, and file offsets and lengths that are multiples of <see cref="OffsetAlignment"/>.
/// </summary>
/// <param name="MemoryAlignment">The alignment of a buffer's address, in bytes (a power of two).</param>
/// <param name="OffsetAlignment">The alignment of a file offset and of a transfer's length, in bytes (a power of two).</param>
public readonly record struct DirectIOAlignment(int MemoryAlignment, int OffsetAlignment)
{
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
