using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Engines;
using Spindle.Engines.FastPath;
using Spindle.Engines.IoUring;
using Spindle.Tests.Engines;
using Spindle.Tests.Infrastructure;
using Xunit.Abstractions;

namespace Spindle.Tests.Durability;

/// <summary>
/// fdatasync and durable writes on the ring: which SQEs ran (the engine's counters), the bytes System.IO's write leaves,
/// and the linked write + fdatasync never reporting success for bytes a short write did not write.
/// </summary>
[Collection(SerialCollection.Name)] // the fault seam is process-wide
public class RingDurabilityTests(ITestOutputHelper output)
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    private static byte[] Data(int length, int seed)
    {
        var data = new byte[length];
        new Random(seed).NextBytes(data);
        return data;
    }

    // A ring of the test's own, so that its counters see only the test's requests.
    // The ring's durable write, whatever the router would choose.
    private static ValueTask WriteDurableOnRing(IoUringEngine engine, SafeFileHandle handle, byte[] data, long offset)
        => engine.RunOnRing(FileRequest.WriteDurable(handle, HandleFacts.Of(handle), data, offset, CancellationToken.None)).AsWrite();

    private static IoUringEngine? PrivateEngine(bool linked)
    {
        if (Spindle.Tests.Infrastructure.PrivateEngine.Create() is not IoUringEngine engine)
        {
            Console.WriteLine($"io_uring is not available ({IoUringEngine.UnavailableReason}): nothing to test on the ring.");
            return null;
        }
        engine.DataSyncWritesRefused = linked;
        return engine;
    }

    [Fact]
    public async Task FlushDataToDiskAsync_on_io_uring_is_a_data_sync_SQE_on_the_ring_when_requests_overlap()
    {
        if (!EngineCases.ReportIoUring(IoEngine.IoUring))
        {
            return;
        }
        using var dir = new TempDirectory();
        using SafeFileHandle file = SpindleFile.OpenHandle(dir.File("f"), FileMode.Create, FileAccess.ReadWrite);
        SpindleRandomAccess.Write(file, Data(10_000, 1), 0);
        IoUringEngine engine = IoUringEngine.Instance!;
        using var overlapping = HeldFileRequest.Hold(); // a lone sync would run on a pool thread (one hop)
        long before = EngineCounts.Of(engine.Thread).DataSyncSqes;
        await SpindleRandomAccess.FlushDataToDiskAsync(file, IoEngine.IoUring).AsTask().WaitAsync(Timeout);
        Assert.True(EngineCounts.Of(engine.Thread).DataSyncSqes > before, "no IORING_OP_FSYNC(DATASYNC) was submitted");

        // Auto runs it on the ring too, where the kernel allows io_uring.
        if (SpindleRandomAccess.DefaultEngine == IoEngine.Auto || SpindleRandomAccess.DefaultEngine == IoEngine.IoUring)
        {
            before = EngineCounts.Of(engine.Thread).DataSyncSqes;
            await SpindleRandomAccess.FlushDataToDiskAsync(file).AsTask().WaitAsync(Timeout);
            Assert.True(EngineCounts.Of(engine.Thread).DataSyncSqes > before, "Auto did not submit the data sync to the ring");
        }
    }

    [Fact]
    public async Task WriteDurableAsync_on_io_uring_is_one_RWF_DSYNC_write_per_call_and_leaves_System_IOs_bytes()
    {
        if (PrivateEngine(linked: false) is not IoUringEngine engine)
        {
            return;
        }
        await DifferentialWrites(engine, "dsync");
        Assert.Equal(25, EngineCounts.Of(engine.Thread).DataSyncWriteSqes);
        Assert.Equal(0, EngineCounts.Of(engine.Thread).LinkedWriteSqes);
        Assert.Equal(0, EngineCounts.Of(engine.Thread).DataSyncSqes);
    }

    [Fact]
    public async Task The_linked_write_and_fdatasync_leave_System_IOs_bytes_with_one_pair_per_call()
    {
        if (PrivateEngine(linked: true) is not IoUringEngine engine)
        {
            return;
        }
        await DifferentialWrites(engine, "linked");
        Assert.Equal(25, EngineCounts.Of(engine.Thread).LinkedWriteSqes);
        Assert.Equal(0, EngineCounts.Of(engine.Thread).DataSyncWriteSqes);
        Assert.Equal(0, EngineCounts.Of(engine.Thread).DataSyncSqes); // every linked sync ran: none had to be submitted again
    }

    private static async Task DifferentialWrites(IoUringEngine engine, string name)
    {
        using var dir = new TempDirectory(AppContext.BaseDirectory);
        using SafeFileHandle ours = SpindleFile.OpenHandle(dir.File(name), FileMode.Create, FileAccess.ReadWrite);
        using SafeFileHandle theirs = File.OpenHandle(dir.File("theirs"), FileMode.Create, FileAccess.ReadWrite);
        var random = new Random(3);
        for (int i = 0; i < 25; i++)
        {
            byte[] data = Data(random.Next(1, 70_000), i);
            long offset = random.NextInt64(0, 200_000);
            System.IO.RandomAccess.Write(theirs, data, offset);
            await WriteDurableOnRing(engine, ours, data, offset).AsTask().WaitAsync(Timeout);
        }
        Assert.Equal(File.ReadAllBytes(dir.File("theirs")), File.ReadAllBytes(dir.File(name)));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_short_durable_write_on_the_ring_is_written_again_before_it_succeeds(bool linked)
    {
        if (PrivateEngine(linked) is not IoUringEngine engine)
        {
            return;
        }
        using var dir = new TempDirectory();
        byte[] data = Data(64 * 1024, 4);
        using SafeFileHandle handle = SpindleFile.OpenHandle(dir.File("f"), FileMode.Create, FileAccess.ReadWrite);
        using (SyscallFaults.Arm((int)handle.DangerousGetHandle(), new ScriptedFaultPlan(SyscallFault.ShortTransfer, SyscallFault.Interrupt)))
        {
            await WriteDurableOnRing(engine, handle, data, 0).AsTask().WaitAsync(Timeout);
        }
        Assert.Equal(data, File.ReadAllBytes(dir.File("f")));
        // The short write, then (after the injected EINTR) the rest: two writes reached the kernel.
        Assert.Equal(2, linked ? EngineCounts.Of(engine.Thread).LinkedWriteSqes : EngineCounts.Of(engine.Thread).DataSyncWriteSqes);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_short_durable_write_on_the_ring_followed_by_an_error_is_never_reported_as_success(bool linked)
    {
        if (PrivateEngine(linked) is not IoUringEngine engine)
        {
            return;
        }
        using var dir = new TempDirectory();
        byte[] data = Data(64 * 1024, 5);
        using SafeFileHandle handle = SpindleFile.OpenHandle(dir.File("f"), FileMode.Create, FileAccess.ReadWrite);
        using (SyscallFaults.Arm((int)handle.DangerousGetHandle(), new ScriptedFaultPlan(SyscallFault.ShortTransfer, SyscallFault.IoError)))
        {
            // The first write is short and (linked) the sync after it succeeds: that sync covers half the bytes, so it
            // is not success; the rest then fails.
            IOException error = await Assert.ThrowsAsync<IOException>(async () => await WriteDurableOnRing(engine, handle, data, 0).AsTask().WaitAsync(Timeout));
            Assert.Equal(5, error.HResult & 0xFFFF); // EIO
        }
        Assert.Equal(1, linked ? EngineCounts.Of(engine.Thread).LinkedWriteSqes : EngineCounts.Of(engine.Thread).DataSyncWriteSqes);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_durable_write_on_the_ring_that_meets_a_full_disk_reports_ENOSPC(bool linked)
    {
        using TmpfsMount? mount = TmpfsMount.TryMount("1m", out string reason);
        if (mount is null)
        {
            SkipReport.Print(output, nameof(A_durable_write_on_the_ring_that_meets_a_full_disk_reports_ENOSPC), reason);
            return;
        }
        if (PrivateEngine(linked) is not IoUringEngine engine)
        {
            return;
        }
        using SafeFileHandle handle = SpindleFile.OpenHandle(mount.File("f"), FileMode.Create, FileAccess.ReadWrite);
        byte[] data = Data(2 << 20, 6);
        // The kernel writes what fits and returns a short count: with the linked pair that breaks the link and the sync
        // completes with -ECANCELED. The rest is written again and fails with ENOSPC; nothing is reported durable.
        IOException error = await Assert.ThrowsAsync<IOException>(async () => await WriteDurableOnRing(engine, handle, data, 0).AsTask().WaitAsync(Timeout));
        Assert.Equal(28, error.HResult & 0xFFFF); // ENOSPC
        long length = new FileInfo(mount.File("f")).Length;
        Assert.InRange(length, 1, data.Length - 1);
        Assert.Equal(data.AsSpan(0, (int)length).ToArray(), File.ReadAllBytes(mount.File("f")));
        Assert.Equal(2, linked ? EngineCounts.Of(engine.Thread).LinkedWriteSqes : EngineCounts.Of(engine.Thread).DataSyncWriteSqes); // the short write, then the one that failed
    }

    [Fact]
    public async Task A_durable_write_to_a_pipe_on_the_ring_delivers_its_bytes()
    {
        if (PrivateEngine(linked: true) is not IoUringEngine engine)
        {
            return;
        }
        using var dir = new TempDirectory();
        using var fifo = new Fifo(dir.File("fifo"));
        // A pipe cannot be synchronised; as for FlushToDisk, that is not an error.
        await engine.WriteDurableAsync(fifo.Writer, new byte[] { 1, 2, 3 }, -1, CancellationToken.None).AsTask().WaitAsync(Timeout);
        byte[] read = new byte[3];
        Assert.Equal(3, SpindleRandomAccess.Read(fifo.Reader, read, 0));
        Assert.Equal(new byte[] { 1, 2, 3 }, read);
        await engine.FlushDataToDiskAsync(fifo.Writer, CancellationToken.None).AsTask().WaitAsync(Timeout);
        Assert.Equal(1, EngineCounts.Of(engine.Thread).LinkedWriteSqes);
    }

    [Fact]
    public async Task The_router_sends_durable_writes_of_buffered_files_to_the_pool_and_of_O_DIRECT_files_to_the_ring()
    {
        if (PrivateEngine(linked: false) is not IoUringEngine engine)
        {
            return;
        }
        using var overlapping = HeldFileRequest.Hold(); // a lone request on a file would run on a pool thread (one hop)
        using var dir = new TempDirectory(AppContext.BaseDirectory);
        using SafeFileHandle buffered = SpindleFile.OpenHandle(dir.File("b"), FileMode.Create, FileAccess.ReadWrite);
        byte[] data = Data(4096, 7);
        // io-wq runs one file's buffered writes one at a time, so concurrent durable writers would each wait for a flush.
        await engine.WriteDurableAsync(buffered, data, 0, CancellationToken.None).AsTask().WaitAsync(Timeout);
        Assert.Equal(0, EngineCounts.Of(engine.Thread).DataSyncWriteSqes + EngineCounts.Of(engine.Thread).LinkedWriteSqes);
        Assert.Equal(data, File.ReadAllBytes(dir.File("b")));

        using SafeFileHandle direct = SpindleFile.OpenHandle(dir.File("d"), new SpindleFileOptions { Mode = FileMode.Create, Access = FileAccess.ReadWrite, DirectIO = true });
        if (Spindle.Engines.FastPath.HandleFacts.Of(direct).SynchronousBackend)
        {
            Console.WriteLine("the test directory is on memory-backed storage: durable O_DIRECT writes run inline there.");
            return;
        }
        using System.Buffers.IMemoryOwner<byte> owner = AlignedMemoryPool.Shared.Rent(4096);
        data.CopyTo(owner.Memory);
        await engine.WriteDurableAsync(direct, owner.Memory[..4096], 4096, CancellationToken.None).AsTask().WaitAsync(Timeout);
        Assert.Equal(1, EngineCounts.Of(engine.Thread).DataSyncWriteSqes);
        Assert.Equal(data, File.ReadAllBytes(dir.File("d"))[4096..]);
    }
}
