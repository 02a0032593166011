using System.Buffers;
using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Tests.Engines;
using Spindle.Tests.Infrastructure;
using Xunit.Abstractions;

namespace Spindle.Tests.Durability;

/// <summary>FlushDataToDisk and WriteDurable: the bytes System.IO's write would leave, the system calls that make them durable, and no success for bytes not written.</summary>
[Collection(SerialCollection.Name)] // the fault seam is process-wide
public class DurableWriteTests(ITestOutputHelper output)
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    public static TheoryData<IoEngine> Engines => new() { IoEngine.Auto, IoEngine.Sync, IoEngine.ThreadPool, IoEngine.IoUring };

    private static byte[] Data(int length, int seed)
    {
        var data = new byte[length];
        new Random(seed).NextBytes(data);
        return data;
    }

    [Theory]
    [MemberData(nameof(Engines))]
    public async Task WriteDurable_leaves_the_bytes_System_IO_Write_leaves(IoEngine engine)
    {
        using var dir = new TempDirectory(AppContext.BaseDirectory);
        using SafeFileHandle ours = SpindleFile.OpenHandle(dir.File("ours"), FileMode.Create, FileAccess.ReadWrite);
        using SafeFileHandle sync = SpindleFile.OpenHandle(dir.File("sync"), FileMode.Create, FileAccess.ReadWrite);
        using SafeFileHandle theirs = File.OpenHandle(dir.File("theirs"), FileMode.Create, FileAccess.ReadWrite);
        var random = new Random(3);
        for (int i = 0; i < 25; i++)
        {
            byte[] data = Data(random.Next(0, 70_000), i);
            long offset = random.NextInt64(0, 200_000);
            System.IO.RandomAccess.Write(theirs, data, offset);
            await SpindleRandomAccess.WriteDurableAsync(ours, data, offset, engine).AsTask().WaitAsync(Timeout);
            SpindleRandomAccess.WriteDurable(sync, data, offset);
        }
        byte[] expected = File.ReadAllBytes(dir.File("theirs"));
        Assert.Equal(expected, File.ReadAllBytes(dir.File("ours")));
        Assert.Equal(expected, File.ReadAllBytes(dir.File("sync")));
    }

    [Theory]
    [MemberData(nameof(Engines))]
    public async Task FlushDataToDisk_takes_what_FlushToDisk_takes_and_rejects_what_it_rejects(IoEngine engine)
    {
        using var dir = new TempDirectory();
        using SafeFileHandle file = SpindleFile.OpenHandle(dir.File("f"), FileMode.Create, FileAccess.ReadWrite);
        SpindleRandomAccess.Write(file, Data(10_000, 1), 0);
        SpindleRandomAccess.FlushDataToDisk(file);
        await SpindleRandomAccess.FlushDataToDiskAsync(file, engine).AsTask().WaitAsync(Timeout);

        // A pipe cannot be synchronised; as for System.IO's FlushToDisk, that is not an error.
        using var fifo = new Fifo(dir.File("fifo"));
        System.IO.RandomAccess.FlushToDisk(fifo.Writer);
        SpindleRandomAccess.FlushDataToDisk(fifo.Writer);
        await SpindleRandomAccess.FlushDataToDiskAsync(fifo.Writer, engine).AsTask().WaitAsync(Timeout);

        SafeFileHandle closed = SpindleFile.OpenHandle(dir.File("f"), FileMode.Open);
        closed.Dispose();
        Assert.Equal(Record(() => System.IO.RandomAccess.FlushToDisk(closed)), Record(() => SpindleRandomAccess.FlushDataToDisk(closed)));
        Assert.Equal(Record(() => System.IO.RandomAccess.FlushToDisk(null!)), Record(() => SpindleRandomAccess.FlushDataToDisk(null!)));
        Assert.Throws<ObjectDisposedException>(() => { _ = SpindleRandomAccess.FlushDataToDiskAsync(closed, engine); });
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await SpindleRandomAccess.FlushDataToDiskAsync(file, engine, new CancellationToken(true)));
    }

    private static string Record(Action action)
    {
        try
        {
            action();
            return "ok";
        }
        catch (Exception e)
        {
            return e.GetType().Name + (e is ArgumentException a ? "(" + a.ParamName + ")" : "");
        }
    }

    [Theory]
    [MemberData(nameof(Engines))]
    public async Task WriteDurable_rejects_bad_arguments_as_Write_does(IoEngine engine)
    {
        using var dir = new TempDirectory();
        using SafeFileHandle readOnly = SpindleFile.OpenHandle(dir.File("f"), FileMode.Create, FileAccess.ReadWrite);
        using SafeFileHandle reader = SpindleFile.OpenHandle(dir.File("f"), FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
        using SafeFileHandle systemReader = File.OpenHandle(dir.File("f"), FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
        Assert.Equal(Record(() => System.IO.RandomAccess.Write(systemReader, new byte[4], 0)), Record(() => SpindleRandomAccess.WriteDurable(reader, new byte[4], 0)));
        Assert.Equal(Record(() => System.IO.RandomAccess.Write(systemReader, new byte[4], -1)), Record(() => SpindleRandomAccess.WriteDurable(reader, new byte[4], -1)));
        Assert.Equal(Record(() => System.IO.RandomAccess.Write(null!, new byte[4], 0)), Record(() => SpindleRandomAccess.WriteDurable(null!, new byte[4], 0)));
        await Assert.ThrowsAsync<UnauthorizedAccessException>(async () => await SpindleRandomAccess.WriteDurableAsync(reader, new byte[4], 0, engine).AsTask().WaitAsync(Timeout));
        Assert.Equal(0, new FileInfo(dir.File("f")).Length);
    }

    [Fact]
    public void WriteDurable_on_O_DIRECT_checks_alignment_first_and_writes_aligned_blocks()
    {
        using var dir = new TempDirectory(AppContext.BaseDirectory);
        using SafeFileHandle handle = SpindleFile.OpenHandle(dir.File("d"), new SpindleFileOptions { Mode = FileMode.Create, Access = FileAccess.ReadWrite, DirectIO = true });
        int block = SpindleFile.GetDirectIOAlignment(handle).OffsetAlignment;
        using IMemoryOwner<byte> owner = AlignedMemoryPool.Shared.Rent(2 * 4096);
        Data(2 * 4096, 9).CopyTo(owner.Memory);
        Assert.ThrowsAny<ArgumentException>(() => SpindleRandomAccess.WriteDurable(handle, owner.Memory.Span[..4096], block / 2 == 0 ? 1 : block / 2));
        Assert.Equal(0, new FileInfo(dir.File("d")).Length);
        SpindleRandomAccess.WriteDurable(handle, owner.Memory.Span, 4096);
        Assert.Equal(owner.Memory.ToArray(), File.ReadAllBytes(dir.File("d"))[4096..]);
    }

    [Fact]
    public void A_short_durable_write_is_continued_and_an_error_after_it_is_never_reported_as_success()
    {
        using var dir = new TempDirectory();
        byte[] data = Data(64 * 1024, 4);
        using SafeFileHandle handle = SpindleFile.OpenHandle(dir.File("f"), FileMode.Create, FileAccess.ReadWrite);
        int fd = (int)handle.DangerousGetHandle();
        using (SyscallFaults.Arm(fd, new ScriptedFaultPlan(SyscallFault.ShortTransfer, SyscallFault.Interrupt, SyscallFault.ShortTransfer)))
        {
            SpindleRandomAccess.WriteDurable(handle, data, 0);
        }
        Assert.Equal(data, File.ReadAllBytes(dir.File("f")));

        using (SyscallFaults.Arm(fd, new ScriptedFaultPlan(SyscallFault.ShortTransfer, SyscallFault.IoError)))
        {
            IOException error = Assert.Throws<IOException>(() => SpindleRandomAccess.WriteDurable(handle, data, 100_000));
            Assert.Equal(5, error.HResult & 0xFFFF); // EIO
        }
    }

    [Fact]
    public void A_durable_write_that_meets_a_full_disk_throws_and_reports_no_durable_byte()
    {
        using TmpfsMount? mount = TmpfsMount.TryMount("1m", out string reason);
        if (mount is null)
        {
            SkipReport.Print(output, nameof(A_durable_write_that_meets_a_full_disk_throws_and_reports_no_durable_byte), reason);
            return;
        }
        using SafeFileHandle handle = SpindleFile.OpenHandle(mount.File("f"), FileMode.Create, FileAccess.ReadWrite);
        byte[] data = Data(2 << 20, 5);
        IOException error = Assert.Throws<IOException>(() => SpindleRandomAccess.WriteDurable(handle, data, 0));
        Assert.Equal(28, error.HResult & 0xFFFF); // ENOSPC
        Assert.True(new FileInfo(mount.File("f")).Length < data.Length);
    }

    public static int TraceDurabilityCalls(string[] args)
    {
        string path = args[0];
        using (SafeFileHandle handle = SpindleFile.OpenHandle(path, FileMode.Create, FileAccess.ReadWrite))
        {
            SpindleRandomAccess.Write(handle, new byte[100], 0);
            Console.Error.WriteLine("MARK flush-data");
            SpindleRandomAccess.FlushDataToDisk(handle);
            Console.Error.WriteLine("MARK write-durable");
            SpindleRandomAccess.WriteDurable(handle, new byte[100], 100);
            Console.Error.WriteLine("MARK flush-to-disk");
            SpindleRandomAccess.FlushToDisk(handle);
        }
        using (var stream = new SpindleFileStream(path, FileMode.Append))
        {
            stream.WriteByte(1);
            Console.Error.WriteLine("MARK spindle-stream-flush-true");
            stream.Flush(flushToDisk: true);
        }
        using (var stream = new FileStream(path, FileMode.Append))
        {
            stream.WriteByte(1);
            Console.Error.WriteLine("MARK system-stream-flush-true");
            stream.Flush(flushToDisk: true);
        }
        Console.Error.WriteLine("MARK end");
        return 0;
    }

    public static int LoneGroupCommits(string[] args)
    {
        using SafeFileHandle handle = SpindleFile.OpenHandle(args[0], new SpindleFileOptions { Mode = FileMode.Create, Access = FileAccess.Write, AtomicAppend = true });
        var writer = new AppendLogWriter(handle);
        byte[] record = new byte[100];
        writer.AppendDurableAsync(record).AsTask().GetAwaiter().GetResult(); // warm-up: first-call work stays outside the marks
        Console.Error.WriteLine("MARK start");
        for (int i = 0; i < 20; i++)
        {
            writer.AppendDurableAsync(record).AsTask().GetAwaiter().GetResult();
        }
        Console.Error.WriteLine("MARK end");
        return 0;
    }

    [Fact]
    public void A_lone_group_commit_caller_makes_one_write_and_one_fdatasync_per_record()
    {
        if (!DurableChild.StraceAvailable(out string reason))
        {
            SkipReport.Print(output, nameof(A_lone_group_commit_caller_makes_one_write_and_one_fdatasync_per_record), reason);
            return;
        }
        using var dir = new TempDirectory();
        (int code, string trace) = DurableChild.Trace(typeof(DurableWriteTests), nameof(LoneGroupCommits), "write,writev,pwrite64,pwritev2,fsync,fdatasync", dir.File("log"));
        Assert.True(code == 0, trace);
        int start = trace.IndexOf("MARK start", StringComparison.Ordinal);
        int end = trace.IndexOf("MARK end", StringComparison.Ordinal);
        Assert.True(start >= 0 && end > start, trace);
        string[] calls = trace[start..end].Split('\n').Where(l => l.Contains('(', StringComparison.Ordinal) && !l.Contains("MARK", StringComparison.Ordinal)).ToArray();
        // No timer, no hand-off to another thread: the caller's own write of its frame and one data sync.
        int frame = AppendLog.WriteFrame(new byte[100], new byte[AppendLog.GetMaxFrameLength(100)]);
        Assert.Equal(20, calls.Count(l => l.Contains("write(", StringComparison.Ordinal) && l.Contains($"{frame}) = {frame}", StringComparison.Ordinal)));
        Assert.Equal(20, calls.Count(l => l.Contains("fdatasync(", StringComparison.Ordinal)));
        Assert.DoesNotContain(calls, l => l.Contains("fsync(", StringComparison.Ordinal) && !l.Contains("fdatasync(", StringComparison.Ordinal));
    }

    [Fact]
    public void Each_call_makes_the_system_call_it_documents_and_Flush_true_is_FileStreams_fsync()
    {
        if (!DurableChild.StraceAvailable(out string reason))
        {
            SkipReport.Print(output, nameof(Each_call_makes_the_system_call_it_documents_and_Flush_true_is_FileStreams_fsync), reason);
            return;
        }
        using var dir = new TempDirectory();
        (int code, string trace) = DurableChild.Trace(typeof(DurableWriteTests), nameof(TraceDurabilityCalls), "fsync,fdatasync,pwritev2,write", dir.File("f"));
        Assert.True(code == 0, trace);
        string Between(string from, string to)
        {
            int start = trace.IndexOf("MARK " + from, StringComparison.Ordinal);
            int end = trace.IndexOf("MARK " + to, start, StringComparison.Ordinal);
            Assert.True(start >= 0 && end > start, trace);
            return trace[start..end];
        }
        string flushData = Between("flush-data", "write-durable");
        Assert.Contains("fdatasync(", flushData);
        Assert.DoesNotContain("fsync(", flushData.Replace("fdatasync(", "", StringComparison.Ordinal));
        string durable = Between("write-durable", "flush-to-disk");
        Assert.Contains("RWF_DSYNC", durable);
        Assert.Contains("fsync(", Between("flush-to-disk", "spindle-stream-flush-true"));
        string ourStream = Between("spindle-stream-flush-true", "system-stream-flush-true");
        string theirStream = Between("system-stream-flush-true", "end");
        Assert.Contains("fsync(", theirStream);
        Assert.Contains("fsync(", ourStream);
        Assert.DoesNotContain("fdatasync(", ourStream);
    }
}
