using System.Buffers;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Beyond;

public class AlignedMemoryPoolTests
{
    // In a child process: on a pool that Dispose broke, every later direct stream of the process would fail.
    [Fact]
    public void Disposing_the_shared_pool_is_harmless_like_MemoryPool_Shared()
    {
        (int code, string text) = ChildProcess.Run(typeof(AlignedMemoryPoolTests), nameof(ChildDisposesSharedPools));
        Assert.True(code == 0, text);
        Assert.Contains("direct stream after: ok", text);
    }

    /// <summary>Child: disposes both shared pools, then rents and runs a direct stream.</summary>
    public static int ChildDisposesSharedPools(string[] args)
    {
        MemoryPool<byte>.Shared.Dispose();
        AlignedMemoryPool.Shared.Dispose();
        MemoryPool<byte>.Shared.Rent(100).Dispose();
        AlignedMemoryPool.Shared.Rent(100).Dispose();
        using var dir = new TempDirectory();
        byte[] data = new byte[10_000];
        new Random(5).NextBytes(data);
        using (var stream = new SpindleFileStream(dir.File("direct"), new SpindleFileOptions
        {
            Mode = FileMode.Create, Access = FileAccess.ReadWrite, DirectIO = true, DirectIOFallback = true,
        }))
        {
            stream.Write(data);
            stream.Position = 0;
            byte[] back = new byte[data.Length];
            stream.ReadExactly(back);
            Console.WriteLine($"direct stream after: {(back.AsSpan().SequenceEqual(data) ? "ok" : "different bytes")}");
        }
        return 0;
    }

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

    [Fact]
    public void DirectIOAlignment_accepts_only_powers_of_two_and_rounds_offsets()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new DirectIOAlignment(0, 512));
        Assert.Throws<ArgumentOutOfRangeException>(() => new DirectIOAlignment(512, 3000));
        Assert.Throws<ArgumentOutOfRangeException>(() => new DirectIOAlignment(-4, 512));
        var alignment = new DirectIOAlignment(4, 512);
        Assert.Equal(1024, alignment.AlignUp(513));
        Assert.Equal(512, alignment.AlignUp(512));
        Assert.Equal(512, alignment.AlignDown(1023));
        Assert.True(alignment.IsAligned(1536L));
        Assert.False(alignment.IsAligned(1537L));
        Assert.True(alignment.IsAligned((nuint)0x1004));
        Assert.False(alignment.IsAligned((nuint)0x1006));
        Assert.Equal(new DirectIOAlignment(4, 512), alignment);
        Assert.Throws<ArgumentOutOfRangeException>(() => alignment with { OffsetAlignment = 100 });
        Assert.Equal(4096, (alignment with { OffsetAlignment = 4096 }).OffsetAlignment);
        (int memory, int offset) = alignment;
        Assert.Equal((4, 512), (memory, offset));
    }
}
