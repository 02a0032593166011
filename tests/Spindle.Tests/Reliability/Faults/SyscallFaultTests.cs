using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Tests.Infrastructure;
using Xunit.Abstractions;
using static Spindle.Tests.Reliability.ReliabilityKit;

namespace Spindle.Tests.Reliability.Faults;

/// <summary>
/// Faults injected at the system-call seam (<see cref="SyscallFaults"/>) on every way to run an operation:
/// EINTR and short transfers are absorbed with the right bytes, EIO and ENOSPC surface as
/// <see cref="IOException"/> on the failing operation, and everything acknowledged before is on disk.
/// </summary>
[Collection(SerialReliability.Name)]
public class SyscallFaultTests(ITestOutputHelper output)
{
    // Writes above the engines' inline limit (WriteFastPath.MaxInlineBytes, 64 KiB) go through the engine itself
    // (the io_uring ring, the pool), smaller ones through the inline path: the tests use both.
    private const int Big = 70_000;
    private const int Size = 2 * Big + 517;

    [Theory]
    [MemberData(nameof(WayData), MemberType = typeof(ReliabilityKit))]
    public Task Interrupted_calls_are_retried_and_every_byte_lands(string way) => Bounded(async () =>
    {
        IoEngine? engine = ParseWay(way);
        using var dir = new TempDirectory();
        byte[] data = Pattern(Size, 1);
        long before = SyscallFaults.Interrupts;
        int descriptors = OpenDescriptors();
        using (SafeFileHandle handle = SpindleFile.OpenHandle(dir.File("f"), FileMode.Create, FileAccess.ReadWrite))
        using (SyscallFaults.Arm(Fd(handle), new RandomFaultPlan(seed: 7, interruptPercent: 60, shortPercent: 0, errorPercent: 0)))
        {
            await WriteAsyncOrSync(handle, data.AsMemory(0, 5000), 0, engine);
            await WriteGatherAsyncOrSync(handle, [data.AsMemory(5000, 100), data.AsMemory(5100, Big - 5100)], 5000, engine);
            await WriteAsyncOrSync(handle, data.AsMemory(Big), Big, engine);

            var read = new byte[Size];
            Assert.Equal(4096, await ReadAsyncOrSync(handle, read.AsMemory(0, 4096), 0, engine));
            Assert.Equal(Size - 4096, await ReadScatterAsyncOrSync(handle, [read.AsMemory(4096, 10), read.AsMemory(4106)], 4096, engine));
            Assert.Equal(data, read);
        }
        Assert.Equal(data, File.ReadAllBytes(dir.File("f")));
        Assert.True(SyscallFaults.Interrupts > before, "the plan injected no EINTR");
        AssertNoDescriptorLeak(descriptors);
        output.WriteLine($"EINTR injected: {SyscallFaults.Interrupts - before}");
    });

    [Theory]
    [MemberData(nameof(WayData), MemberType = typeof(ReliabilityKit))]
    public Task Short_writes_are_continued_until_every_byte_is_written(string way) => Bounded(async () =>
    {
        IoEngine? engine = ParseWay(way);
        using var dir = new TempDirectory();
        byte[] data = Pattern(Size, 2);
        long before = SyscallFaults.ShortTransfers;
        using (SafeFileHandle handle = SpindleFile.OpenHandle(dir.File("f"), FileMode.Create, FileAccess.Write))
        using (SyscallFaults.Arm(Fd(handle), new ScriptedFaultPlan(SyscallFault.ShortTransfer, SyscallFault.None,
            SyscallFault.ShortTransfer, SyscallFault.ShortTransfer, SyscallFault.Interrupt, SyscallFault.ShortTransfer)))
        {
            await WriteAsyncOrSync(handle, data.AsMemory(0, Big), 0, engine);
            // Three buffers so that a cut falls inside an iovec and the rest must be resumed there.
            await WriteGatherAsyncOrSync(handle, [data.AsMemory(Big, 1000), data.AsMemory(Big + 1000, 3000), data.AsMemory(Big + 4000)], Big, engine);
        }
        Assert.Equal(data, File.ReadAllBytes(dir.File("f")));
        Assert.Equal(4, SyscallFaults.ShortTransfers - before);
    });

    [Theory]
    [MemberData(nameof(WayData), MemberType = typeof(ReliabilityKit))]
    public Task Short_reads_return_a_correct_prefix_and_a_loop_reads_everything(string way) => Bounded(async () =>
    {
        IoEngine? engine = ParseWay(way);
        using var dir = new TempDirectory();
        byte[] data = Pattern(Size, 3);
        File.WriteAllBytes(dir.File("f"), data);
        using SafeFileHandle handle = SpindleFile.OpenHandle(dir.File("f"));
        using IDisposable _ = SyscallFaults.Arm(Fd(handle), new RandomFaultPlan(seed: 3, interruptPercent: 20, shortPercent: 60, errorPercent: 0));

        var read = new byte[Size];
        int total = 0;
        while (total < Size)
        {
            int n = await ReadAsyncOrSync(handle, read.AsMemory(total), total, engine);
            Assert.True(n > 0, "a short read must not look like the end of the file");
            total += n;
        }
        Assert.Equal(data, read);

        // A short preadv ends the scatter read early; what it returns is right.
        var first = new byte[100];
        var second = new byte[Size];
        using (SyscallFaults.Arm(Fd(handle), new ScriptedFaultPlan(SyscallFault.ShortTransfer)))
        {
            long n = await ReadScatterAsyncOrSync(handle, [first, second], 0, engine);
            Assert.InRange(n, 1, Size - 1);
            Assert.Equal(data.AsSpan(0, 100).ToArray(), first);
            Assert.Equal(data.AsSpan(100, (int)n - 100).ToArray(), second.AsSpan(0, (int)n - 100).ToArray());
        }
    });

    [Theory]
    [MemberData(nameof(WayData), MemberType = typeof(ReliabilityKit))]
    public Task An_IO_error_fails_the_operation_it_hits_and_keeps_what_was_acknowledged(string way) => Bounded(async () =>
    {
        IoEngine? engine = ParseWay(way);
        using var dir = new TempDirectory();
        byte[] data = Pattern(Size, 4);
        int descriptors = OpenDescriptors();
        using (SafeFileHandle handle = SpindleFile.OpenHandle(dir.File("f"), FileMode.Create, FileAccess.ReadWrite))
        using (SyscallFaults.Arm(Fd(handle), new ScriptedFaultPlan(SyscallFault.None, SyscallFault.Interrupt, SyscallFault.IoError, SyscallFault.None,
            SyscallFault.NoSpace, SyscallFault.None, SyscallFault.IoError)))
        {
            await WriteAsyncOrSync(handle, data.AsMemory(0, Big), 0, engine);             // call 1: acknowledged
            IOException eio = await Assert.ThrowsAsync<IOException>(() => WriteAsyncOrSync(handle, data.AsMemory(Big, Big), Big, engine)); // 2: EINTR, 3: EIO
            Assert.Equal(5, eio.HResult);
            await WriteAsyncOrSync(handle, data.AsMemory(2 * Big, 100), 2 * Big, engine); // call 4: acknowledged
            IOException enospc = await Assert.ThrowsAsync<IOException>(() => WriteGatherAsyncOrSync(handle, [data.AsMemory(100, 10)], 100, engine)); // 5
            Assert.Equal(28, enospc.HResult);
            var read = new byte[10];
            Assert.Equal(10, await ReadAsyncOrSync(handle, read, 2 * Big, engine));      // call 6
            Assert.Equal(data.AsSpan(2 * Big, 10).ToArray(), read);
            await Assert.ThrowsAsync<IOException>(() => ReadAsyncOrSync(handle, read, 0, engine)); // call 7: EIO on a read
        }

        byte[] disk = File.ReadAllBytes(dir.File("f"));
        Assert.Equal(2 * Big + 100, disk.Length);
        Assert.Equal(data.AsSpan(0, Big).ToArray(), disk.AsSpan(0, Big).ToArray());
        Assert.All(disk.AsSpan(Big, Big).ToArray(), b => Assert.Equal(0, b));   // the failed write left a hole, nothing torn
        Assert.Equal(data.AsSpan(2 * Big, 100).ToArray(), disk.AsSpan(2 * Big).ToArray());
        AssertNoDescriptorLeak(descriptors);
    });

    [Theory]
    [InlineData(IoEngine.IoUring)]
    [InlineData(IoEngine.ThreadPool)]
    [InlineData(IoEngine.Auto)]
    public Task Operations_failing_in_the_middle_of_a_batch_fail_alone_and_the_others_land(IoEngine engine) => Bounded(async () =>
    {
        using var dir = new TempDirectory();
        const int Count = 96;
        const int Block = 80 * 1024; // above the inline-write limit: through the ring or the pool
        byte[] data = Pattern(Count * Block, 6);
        int descriptors = OpenDescriptors();
        var outcomes = new bool[Count];
        using (SafeFileHandle handle = SpindleFile.OpenHandle(dir.File("f"), FileMode.Create, FileAccess.ReadWrite, FileShare.None, FileOptions.Asynchronous))
        using (SyscallFaults.Arm(Fd(handle), new RandomFaultPlan(seed: 8, interruptPercent: 10, shortPercent: 10, errorPercent: 15)))
        {
            // All in flight at once, so that the ring submits them in batches with failures among them.
            Task[] writes = [.. Enumerable.Range(0, Count).Select(i => SpindleRandomAccess.WriteAsync(handle, data.AsMemory(i * Block, Block), (long)i * Block, engine).AsTask())];
            for (int i = 0; i < Count; i++)
            {
                try
                {
                    await writes[i];
                    outcomes[i] = true;
                }
                catch (IOException e) when (e.HResult == 5)
                {
                }
            }
        }
        byte[] disk = File.ReadAllBytes(dir.File("f"));
        int failed = outcomes.Count(ok => !ok);
        Assert.InRange(failed, 1, Count - 1);
        for (int i = 0; i < Count; i++)
        {
            if (outcomes[i])
            {
                Assert.True(disk.AsSpan(i * Block, Block).SequenceEqual(data.AsSpan(i * Block, Block)), $"acknowledged write {i} is not on disk");
            }
        }
        AssertNoDescriptorLeak(descriptors);
        output.WriteLine($"{engine}: {Count - failed} writes acknowledged and on disk, {failed} failed with EIO");
    });

    [Fact]
    public Task Io_uring_enter_failing_with_EINTR_EBUSY_and_EAGAIN_is_retried_and_every_operation_completes() => Bounded(async () =>
    {
        if (!SpindleRandomAccess.IsIoUringAvailable)
        {
            output.WriteLine("skipped: io_uring is not available here");
            return;
        }
        using var dir = new TempDirectory();
        const int Count = 128;
        const int Block = 128 * 1024; // above the inline-write limit, so every operation goes through the ring
        byte[] data = Pattern(Count * Block, 14);
        long before = SyscallFaults.Interrupts + SyscallFaults.Errors;
        using (SafeFileHandle handle = SpindleFile.OpenHandle(dir.File("f"), FileMode.Create, FileAccess.ReadWrite, FileShare.None, FileOptions.Asynchronous))
        using (SyscallFaults.Arm(Fd(handle), new ScriptedFaultPlan())) // no faults; armed so that reads skip the page-cache fast path
        // The first enters fail for certain (how many enters a run makes depends on how the ring batches), then at random.
        using (SyscallFaults.ArmRingEnter(new FirstThen(
            new ScriptedFaultPlan(SyscallFault.Interrupt, SyscallFault.IoError, SyscallFault.Interrupt), count: 3,
            new RandomFaultPlan(seed: 15, interruptPercent: 30, shortPercent: 0, errorPercent: 20))))
        {
            await Task.WhenAll(Enumerable.Range(0, Count).Select(i =>
                SpindleRandomAccess.WriteAsync(handle, data.AsMemory(i * Block, Block), (long)i * Block, IoEngine.IoUring).AsTask()));
            var read = new byte[data.Length];
            int[] counts = await Task.WhenAll(Enumerable.Range(0, Count).Select(i =>
                SpindleRandomAccess.ReadAsync(handle, read.AsMemory(i * Block, Block), (long)i * Block, IoEngine.IoUring).AsTask()));
            Assert.All(counts, n => Assert.Equal(Block, n));
            Assert.True(read.AsSpan().SequenceEqual(data), "wrong bytes read back");
        }
        Assert.True(data.AsSpan().SequenceEqual(File.ReadAllBytes(dir.File("f"))), "wrong bytes on disk");
        long injected = SyscallFaults.Interrupts + SyscallFaults.Errors - before;
        Assert.True(injected > 0, "no io_uring_enter fault was injected");
        output.WriteLine($"{injected} io_uring_enter faults injected and absorbed");
    });

    [Fact]
    public Task Descriptors_of_other_files_are_not_affected_while_one_is_armed() => Bounded(() =>
    {
        using var dir = new TempDirectory();
        using SafeFileHandle armed = SpindleFile.OpenHandle(dir.File("a"), FileMode.Create, FileAccess.ReadWrite);
        using SafeFileHandle other = SpindleFile.OpenHandle(dir.File("b"), FileMode.Create, FileAccess.ReadWrite);
        using IDisposable _ = SyscallFaults.Arm(Fd(armed), new RandomFaultPlan(1, 0, 0, errorPercent: 100));
        SpindleRandomAccess.Write(other, new byte[] { 1, 2, 3 }, 0);
        Assert.Throws<IOException>(() => SpindleRandomAccess.Write(armed, new byte[] { 1 }, 0));
        Assert.Equal(new byte[] { 1, 2, 3 }, File.ReadAllBytes(dir.File("b")));
        return Task.CompletedTask;
    });

    /// <summary>The first <c>count</c> decisions from one plan, the rest from another.</summary>
    private sealed class FirstThen(FaultPlan first, int count, FaultPlan then) : FaultPlan
    {
        private int _calls;

        internal override SyscallFault Next(SyscallKind kind)
            => Interlocked.Increment(ref _calls) <= count ? first.Next(kind) : then.Next(kind);
    }
}
