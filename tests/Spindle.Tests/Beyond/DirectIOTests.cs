using System.Buffers;
using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Interop;
using Spindle.Tests.Infrastructure;
using Xunit.Abstractions;

namespace Spindle.Tests.Beyond;

[Collection(MeterCollection.Name)]
public class DirectIOTests
{
    private readonly ITestOutputHelper _output;

    public DirectIOTests(ITestOutputHelper output) => _output = output;

    /// <summary>A directory on the disk the tests run from (O_DIRECT needs a real block-device file system).</summary>
    internal static TempDirectory DiskDirectory() => new(AppContext.BaseDirectory);

    internal static SafeFileHandle OpenDirect(string path, FileMode mode = FileMode.Create, bool fallback = false) =>
        SpindleFile.OpenHandle(path, new SpindleFileOptions { Mode = mode, Access = FileAccess.ReadWrite, DirectIO = true, DirectIOFallback = fallback });

    internal static bool KernelSaysDirect(SafeFileHandle handle)
    {
        int flags = Libc.Fcntl((int)handle.DangerousGetHandle(), LinuxConstants.F_GETFL, 0);
        Assert.True(flags >= 0);
        return (flags & OpenFlags.O_DIRECT) != 0;
    }

    [Fact]
    public async Task Aligned_reads_and_writes_succeed_with_O_DIRECT_set()
    {
        using var dir = DiskDirectory();
        string path = dir.File("direct");
        using (SafeFileHandle handle = OpenDirect(path))
        {
            Assert.True(KernelSaysDirect(handle));
            Assert.True(SpindleFile.IsDirectIO(handle));
            DirectIOAlignment alignment = SpindleFile.GetDirectIOAlignment(handle);
            _output.WriteLine($"alignment on {dir.Path}: {alignment}");
            int block = Math.Max(alignment.OffsetAlignment, 4096);

            using IMemoryOwner<byte> owner = AlignedMemoryPool.Shared.Rent(4 * block);
            Memory<byte> buffer = owner.Memory[..(4 * block)];
            new Random(5).NextBytes(buffer.Span);
            byte[] expected = buffer.ToArray();

            SpindleRandomAccess.Write(handle, buffer.Span[..block], 0);
            await SpindleRandomAccess.WriteAsync(handle, buffer.Slice(block, block), block);
            SpindleRandomAccess.Write(handle, new ReadOnlyMemory<byte>[] { buffer.Slice(2 * block, block), buffer.Slice(3 * block, block) }, 2 * block);

            using IMemoryOwner<byte> back = AlignedMemoryPool.Shared.Rent(4 * block);
            Memory<byte> target = back.Memory[..(4 * block)];
            Assert.Equal(2 * block, SpindleRandomAccess.Read(handle, target.Span[..(2 * block)], 0));
            Assert.Equal(block, await SpindleRandomAccess.ReadAsync(handle, target.Slice(2 * block, block), 2 * block));
            Assert.Equal(block, await SpindleRandomAccess.ReadAsync(handle, new[] { target.Slice(3 * block, block) }, 3 * block));
            Assert.Equal(expected, target.ToArray());
            Assert.Equal(4L * block, SpindleRandomAccess.GetLength(handle));
        }
        Assert.Equal(4 * Math.Max(SpindleFile.GetDirectIOAlignment(File.OpenHandle(path)).OffsetAlignment, 4096), File.ReadAllBytes(path).Length);
    }

    [Theory]
    [InlineData(IoEngine.Auto)]
    [InlineData(IoEngine.Sync)]
    [InlineData(IoEngine.ThreadPool)]
    [InlineData(IoEngine.IoUring)]
    public async Task Aligned_async_IO_works_and_misaligned_is_refused_on_every_engine(IoEngine engine)
    {
        using var dir = DiskDirectory();
        using SafeFileHandle handle = OpenDirect(dir.File("engine"));
        DirectIOAlignment alignment = SpindleFile.GetDirectIOAlignment(handle);
        int block = Math.Max(alignment.OffsetAlignment, 4096);
        using IMemoryOwner<byte> owner = AlignedMemoryPool.Shared.Rent(2 * block);
        Memory<byte> buffer = owner.Memory[..(2 * block)];
        new Random(9).NextBytes(buffer.Span);
        byte[] expected = buffer.ToArray();

        await SpindleRandomAccess.WriteAsync(handle, buffer, block, engine);
        buffer.Span.Clear();
        Assert.Equal(2 * block, await SpindleRandomAccess.ReadAsync(handle, buffer, block, engine));
        Assert.Equal(expected, buffer.ToArray());

        // A plan without faults counts this descriptor's calls only: not the ring's own enters, not other handles'.
        var calls = new ScriptedFaultPlan();
        using (SyscallFaults.Arm((int)handle.DangerousGetHandle(), calls))
        {
            await Assert.ThrowsAsync<ArgumentException>(async () => await SpindleRandomAccess.ReadAsync(handle, buffer[1..(block + 1)], 0, engine));
            await Assert.ThrowsAsync<ArgumentException>(async () => await SpindleRandomAccess.WriteAsync(handle, buffer[..block], 1, engine));
            Assert.Equal(0, calls.Calls);
            Assert.Equal(block, await SpindleRandomAccess.ReadAsync(handle, buffer[..block], 0, engine));
            Assert.True(calls.Calls > 0, "the seam did not see an aligned read on this engine");
        }
    }

    [Fact]
    public void FileOptions_NoBuffering_opens_with_O_DIRECT_and_plain_options_do_not()
    {
        using var dir = DiskDirectory();
        using (SafeFileHandle direct = SpindleFile.OpenHandle(dir.File("a"), FileMode.Create, FileAccess.ReadWrite, options: (FileOptions)0x20000000))
        {
            Assert.True(KernelSaysDirect(direct));
        }
        using (SafeFileHandle plain = SpindleFile.OpenHandle(dir.File("b"), FileMode.Create, FileAccess.ReadWrite))
        {
            Assert.False(KernelSaysDirect(plain));
            Assert.False(SpindleFile.IsDirectIO(plain));
        }
        // System.IO accepts the flag and ignores it on Linux.
        using SafeFileHandle system = File.OpenHandle(dir.File("c"), FileMode.Create, FileAccess.ReadWrite, options: (FileOptions)0x20000000);
        Assert.False(KernelSaysDirect(system));
    }

    [Fact]
    public unsafe void The_discovered_alignment_is_what_the_kernel_enforces()
    {
        using var dir = DiskDirectory();
        using SafeFileHandle handle = OpenDirect(dir.File("probe"));
        DirectIOAlignment alignment = SpindleFile.GetDirectIOAlignment(handle);
        Assert.True(System.Numerics.BitOperations.IsPow2(alignment.MemoryAlignment));
        Assert.True(System.Numerics.BitOperations.IsPow2(alignment.OffsetAlignment));
        Assert.Equal(alignment, SpindleFile.GetDirectIOAlignment(File.OpenHandle(dir.File("probe"))));

        using IMemoryOwner<byte> owner = AlignedMemoryPool.Shared.Rent(2 * alignment.OffsetAlignment);
        using MemoryHandle pin = owner.Memory.Pin();
        // Sufficient: an aligned write goes through.
        Assert.Equal(alignment.OffsetAlignment, (int)Libc.PWrite(handle, (byte*)pin.Pointer, (nuint)alignment.OffsetAlignment, alignment.OffsetAlignment));
        // Necessary: half the alignment is refused by the kernel itself (straight to libc, past Spindle's checks).
        if (alignment.OffsetAlignment > 1)
        {
            Assert.True(Libc.PWrite(handle, (byte*)pin.Pointer, (nuint)alignment.OffsetAlignment, alignment.OffsetAlignment / 2) < 0);
            Assert.Equal(Errno.EINVAL, Errno.Last);
        }
    }

    public static TheoryData<string> MisalignedCalls => new()
    {
        "read offset", "read length", "read address",
        "write offset", "write length", "write address",
        "async read offset", "async read length", "async read address",
        "async write offset", "async write length", "async write address",
        "scatter read offset", "scatter read length", "scatter read address",
        "gather write offset", "gather write length", "gather write address",
        "async scatter read address", "async gather write length",
    };

    [Theory]
    [MemberData(nameof(MisalignedCalls))]
    public async Task Misaligned_calls_throw_ArgumentException_before_any_system_call(string call)
    {
        using var dir = DiskDirectory();
        string path = dir.File("direct");
        byte[] original = CopyTests.RandomBytes(16384, 3);
        File.WriteAllBytes(path, original);
        using SafeFileHandle handle = OpenDirect(path, FileMode.Open);
        DirectIOAlignment alignment = SpindleFile.GetDirectIOAlignment(handle);
        int block = alignment.OffsetAlignment;
        using IMemoryOwner<byte> owner = AlignedMemoryPool.Shared.Rent(4 * block + 4096);

        // Exactly one thing is wrong in each call.
        long offset = call.EndsWith("offset") ? block + 1 : block;
        int length = call.EndsWith("length") ? block + 1 : block;
        int start = call.EndsWith("address") ? 1 : 0;
        Memory<byte> buffer = owner.Memory.Slice(start, length);
        if (call.EndsWith("length") && block == 1 || call.EndsWith("address") && alignment.MemoryAlignment == 1 || call.EndsWith("offset") && block == 1)
        {
            _output.WriteLine($"SKIPPED: alignment {alignment} cannot be violated that way");
            return;
        }

        // A plan without faults counts this descriptor's calls only: not the ring's own enters, not other handles'.
        var calls = new ScriptedFaultPlan();
        using IDisposable armed = SyscallFaults.Arm((int)handle.DangerousGetHandle(), calls);
        ArgumentException e = await Assert.ThrowsAnyAsync<ArgumentException>(async () =>
        {
            switch (call.Replace(" offset", "").Replace(" length", "").Replace(" address", ""))
            {
                case "read": SpindleRandomAccess.Read(handle, buffer.Span, offset); break;
                case "write": SpindleRandomAccess.Write(handle, buffer.Span, offset); break;
                case "async read": await SpindleRandomAccess.ReadAsync(handle, buffer, offset); break;
                case "async write": await SpindleRandomAccess.WriteAsync(handle, buffer, offset); break;
                case "scatter read": SpindleRandomAccess.Read(handle, new[] { owner.Memory[..block], buffer }, offset); break;
                case "gather write": SpindleRandomAccess.Write(handle, new ReadOnlyMemory<byte>[] { owner.Memory[..block], buffer }, offset); break;
                case "async scatter read": await SpindleRandomAccess.ReadAsync(handle, new[] { owner.Memory[..block], buffer }, offset); break;
                case "async gather write": await SpindleRandomAccess.WriteAsync(handle, new ReadOnlyMemory<byte>[] { owner.Memory[..block], buffer }, offset); break;
                default: throw new InvalidOperationException(call);
            }
        });
        _output.WriteLine($"{e.GetType().Name} ({e.ParamName}): {e.Message}");

        Assert.IsType<ArgumentException>(e);
        Assert.Equal(0, calls.Calls);
        Assert.Equal(block, SpindleRandomAccess.Read(handle, owner.Memory.Span[..block], 0));
        Assert.True(calls.Calls > 0, "the seam did not see an aligned read");
        if (call.EndsWith("offset"))
        {
            Assert.Equal("fileOffset", e.ParamName);
            Assert.Contains((block + 1).ToString(), e.Message);
            Assert.Contains($"multiple of {block} bytes", e.Message);
        }
        else if (call.EndsWith("length"))
        {
            Assert.Contains((block + 1).ToString(), e.Message);
            Assert.Contains($"multiple of {block} bytes", e.Message);
        }
        else
        {
            Assert.Contains("0x", e.Message);
            Assert.Contains($"multiple of {alignment.MemoryAlignment} bytes", e.Message);
        }
        armed.Dispose();
        handle.Dispose();
        Assert.Equal(original, File.ReadAllBytes(path));
    }

    [Fact]
    public void A_file_system_that_refuses_O_DIRECT_gives_a_clear_IOException_and_leaves_nothing_behind()
    {
        using var dir = DiskDirectory();
        using ScratchMount? ramfs = ScratchMount.TryCreate(dir.File("ramfs"), "ramfs", "", _output);
        if (ramfs is null)
        {
            return;
        }
        string created = Path.Combine(ramfs.Path, "new");
        foreach (FileMode mode in new[] { FileMode.CreateNew, FileMode.Create, FileMode.OpenOrCreate })
        {
            IOException e = Assert.Throws<IOException>(() => OpenDirect(created, mode));
            _output.WriteLine($"{mode}: {e.Message}");
            Assert.Contains("O_DIRECT", e.Message);
            Assert.Contains(created, e.Message);
            Assert.False(File.Exists(created), $"{mode} left the file it could not open directly");
        }

        string existing = Path.Combine(ramfs.Path, "existing");
        File.WriteAllText(existing, "keep me");
        foreach (FileMode mode in new[] { FileMode.Open, FileMode.Create, FileMode.Truncate, FileMode.OpenOrCreate })
        {
            Assert.Throws<IOException>(() => OpenDirect(existing, mode));
            Assert.Equal("keep me", File.ReadAllText(existing));
        }
    }

    [Fact]
    public void DirectIOFallback_opens_buffered_where_O_DIRECT_is_refused_and_shows_it()
    {
        using var dir = DiskDirectory();
        using ScratchMount? ramfs = ScratchMount.TryCreate(dir.File("ramfs"), "ramfs", "", _output);
        if (ramfs is null)
        {
            return;
        }
        long fallbacks = SpindleTotals.Snapshot().Fallbacks;
        string path = Path.Combine(ramfs.Path, "f");
        using SafeFileHandle handle = OpenDirect(path, FileMode.Create, fallback: true);

        Assert.False(SpindleFile.IsDirectIO(handle));
        Assert.False(KernelSaysDirect(handle));
        Assert.Equal(fallbacks + 1, SpindleTotals.Snapshot().Fallbacks);
        // Buffered now, so nothing needs alignment.
        SpindleRandomAccess.Write(handle, "hello"u8, 3);
        Assert.Equal(8, SpindleRandomAccess.GetLength(handle));

        // On a disk that supports O_DIRECT the same options give a direct handle and no fallback.
        using SafeFileHandle direct = OpenDirect(dir.File("d"), FileMode.Create, fallback: true);
        Assert.True(SpindleFile.IsDirectIO(direct));
        Assert.Equal(fallbacks + 1, SpindleTotals.Snapshot().Fallbacks);
    }

    [Fact]
    public void Tmpfs_either_accepts_O_DIRECT_or_refuses_it_clearly()
    {
        using var dir = DiskDirectory();
        using ScratchMount? tmpfs = ScratchMount.TryCreate(dir.File("tmpfs"), "tmpfs", "size=1m", _output);
        if (tmpfs is null)
        {
            return;
        }
        string path = Path.Combine(tmpfs.Path, "f");
        try
        {
            using SafeFileHandle handle = OpenDirect(path);
            // Linux 6.6 and later accept O_DIRECT on tmpfs (it is still served from memory).
            Assert.True(KernelSaysDirect(handle));
            DirectIOAlignment alignment = SpindleFile.GetDirectIOAlignment(handle);
            _output.WriteLine($"tmpfs accepts O_DIRECT on {Environment.OSVersion}; alignment {alignment}");
            using IMemoryOwner<byte> owner = AlignedMemoryPool.Shared.Rent(alignment.OffsetAlignment);
            SpindleRandomAccess.Write(handle, owner.Memory.Span[..alignment.OffsetAlignment], 0);
            Assert.Throws<ArgumentException>(() => SpindleRandomAccess.Write(handle, owner.Memory.Span[..alignment.OffsetAlignment], 1));
        }
        catch (IOException e)
        {
            _output.WriteLine($"tmpfs refuses O_DIRECT: {e.Message}");
            Assert.Contains("O_DIRECT", e.Message);
            Assert.False(File.Exists(path));
        }
    }
}
