using System.Buffers;

namespace Spindle.Tests.Beyond;

public class AlignedMemoryPoolTests
{
    [Theory]
    [InlineData(512, 1)]
    [InlineData(4096, 100)]
    [InlineData(4096, 4096)]
    [InlineData(4096, 4097)]
    [InlineData(65536, 1 << 20)]
    [InlineData(4096, (32 << 20) + 1)]
    public unsafe void Rented_buffers_are_aligned_and_large_enough(int alignment, int size)
    {
        using var pool = new AlignedMemoryPool(alignment);
        using IMemoryOwner<byte> owner = pool.Rent(size);
        using MemoryHandle pin = owner.Memory.Pin();
        Assert.Equal(0, (long)pin.Pointer % alignment);
        Assert.True(owner.Memory.Length >= size);
        Assert.Equal(0, owner.Memory.Length % alignment);
        owner.Memory.Span.Fill(0xAB); // the whole buffer is usable memory
        Assert.Equal(0xAB, owner.Memory.Span[^1]);
    }

    [Fact]
    public unsafe void A_returned_buffer_is_reused_and_the_old_owner_is_dead()
    {
        using var pool = new AlignedMemoryPool(4096);
        IMemoryOwner<byte> first = pool.Rent(10_000);
        nint address;
        using (MemoryHandle pin = first.Memory.Pin())
        {
            address = (nint)pin.Pointer;
        }
        first.Dispose();
        first.Dispose(); // twice is harmless
        Assert.Throws<ObjectDisposedException>(() => first.Memory.Span.Length);

        using IMemoryOwner<byte> second = pool.Rent(10_000);
        using MemoryHandle again = second.Memory.Pin();
        Assert.Equal(address, (nint)again.Pointer);
    }

    [Fact]
    public void Bad_arguments_are_rejected()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new AlignedMemoryPool(0));
        Assert.Throws<ArgumentOutOfRangeException>(() => new AlignedMemoryPool(3000));
        Assert.Throws<ArgumentOutOfRangeException>(() => AlignedMemoryPool.Shared.Rent(-2));
        var pool = new AlignedMemoryPool(4096);
        pool.Dispose();
        Assert.Throws<ObjectDisposedException>(() => pool.Rent(1));
        Assert.Equal(4096, AlignedMemoryPool.Shared.Alignment);
        using IMemoryOwner<byte> defaultSize = AlignedMemoryPool.Shared.Rent();
        Assert.Equal(64 << 10, defaultSize.Memory.Length);
    }
}
