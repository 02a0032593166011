using System.Text;
using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Tests.Engines;
using Spindle.Tests.Infrastructure;
using Xunit.Abstractions;

namespace Spindle.Tests.Durability;

/// <summary>AppendLogWriter's group commit and AppendLog.AppendAsync: every acknowledged record is in the file once, failures fail exactly their records.</summary>
[Collection(SerialCollection.Name)] // the fault seam is process-wide
public class GroupCommitTests(ITestOutputHelper output)
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);

    private static SafeFileHandle OpenLog(string path) =>
        SpindleFile.OpenHandle(path, new SpindleFileOptions { Mode = FileMode.OpenOrCreate, Access = FileAccess.Write, Share = FileShare.ReadWrite, AtomicAppend = true });

    [Fact]
    public async Task Concurrent_durable_appends_are_each_in_the_log_once_and_whole()
    {
        using var dir = new TempDirectory(AppContext.BaseDirectory);
        string path = dir.File("log");
        using SafeFileHandle handle = OpenLog(path);
        var writer = new AppendLogWriter(handle);
        const int Writers = 32;
        const int PerWriter = 60;
        await Task.WhenAll(Enumerable.Range(0, Writers).Select(w => Task.Run(async () =>
        {
            for (int n = 0; n < PerWriter; n++)
            {
                await writer.AppendDurableAsync(Encoding.ASCII.GetBytes($"w{w}-r{n}-" + new string('x', (w * n) % 200)));
            }
        }))).WaitAsync(Timeout);

        AppendLogScan scan = AppendLog.ReadAll(path);
        Assert.Empty(scan.Damaged);
        var seen = scan.Records.Select(r => Encoding.ASCII.GetString(r.Span).Split('-')[0] + "-" + Encoding.ASCII.GetString(r.Span).Split('-')[1]).ToList();
        Assert.Equal(Writers * PerWriter, seen.Count);
        Assert.Equal(Writers * PerWriter, seen.Distinct().Count());
        // Each writer's records are in its own order.
        for (int w = 0; w < Writers; w++)
        {
            var mine = seen.Where(s => s.StartsWith($"w{w}-", StringComparison.Ordinal)).ToList();
            Assert.Equal(Enumerable.Range(0, PerWriter).Select(n => $"w{w}-r{n}"), mine);
        }
    }

    [Fact]
    public void A_lone_caller_finds_its_record_durable_when_the_call_returns()
    {
        // No timer and no hand-off: the caller that finds nothing in progress writes and syncs itself.
        using var dir = new TempDirectory();
        string path = dir.File("log");
        using SafeFileHandle handle = OpenLog(path);
        var writer = new AppendLogWriter(handle);
        for (int i = 0; i < 10; i++)
        {
            ValueTask append = writer.AppendDurableAsync(new byte[] { (byte)i });
            Assert.True(append.IsCompletedSuccessfully);
            append.GetAwaiter().GetResult();
        }
        Assert.Equal(Enumerable.Range(0, 10).Select(i => (byte)i), AppendLog.ReadAll(path).Records.Select(r => r.Span[0]));
    }

    [Fact]
    public void The_writer_takes_only_append_handles()
    {
        using var dir = new TempDirectory();
        using SafeFileHandle plain = SpindleFile.OpenHandle(dir.File("f"), FileMode.Create, FileAccess.Write);
        Assert.Throws<ArgumentException>(() => new AppendLogWriter(plain));
        Assert.Throws<ArgumentNullException>(() => new AppendLogWriter(null!));
        Assert.ThrowsAsync<ArgumentException>(async () => await AppendLog.AppendAsync(plain, new byte[1])).GetAwaiter().GetResult();
    }

    [Fact]
    public async Task AppendAsync_writes_the_frame_Append_writes()
    {
        using var dir = new TempDirectory();
        using (SafeFileHandle a = OpenLog(dir.File("a")))
        using (SafeFileHandle b = OpenLog(dir.File("b")))
        {
            for (int i = 0; i < 50; i++)
            {
                byte[] payload = Encoding.ASCII.GetBytes(new string((char)('a' + i % 26), i * 37));
                AppendLog.Append(a, payload);
                await AppendLog.AppendAsync(b, payload).AsTask().WaitAsync(Timeout);
            }
        }
        Assert.Equal(File.ReadAllBytes(dir.File("a")), File.ReadAllBytes(dir.File("b")));
    }

    [Fact]
    public async Task A_failed_write_fails_exactly_its_records_and_later_appends_succeed()
    {
        using var dir = new TempDirectory();
        string path = dir.File("log");
        using SafeFileHandle handle = OpenLog(path);
        var writer = new AppendLogWriter(handle);
        await writer.AppendDurableAsync("before"u8.ToArray());
        using (SyscallFaults.Arm((int)handle.DangerousGetHandle(), new ScriptedFaultPlan(SyscallFault.IoError)))
        {
            IOException error = await Assert.ThrowsAsync<IOException>(async () => await writer.AppendDurableAsync("lost"u8.ToArray()));
            Assert.Equal(5, error.HResult & 0xFFFF);
            await writer.AppendDurableAsync("after"u8.ToArray());
        }
        Assert.Equal(new[] { "before", "after" }, AppendLog.ReadAll(path).Records.Select(r => Encoding.ASCII.GetString(r.Span)));
    }

    [Fact]
    public async Task On_a_full_disk_no_acknowledged_record_is_lost_and_every_failure_is_reported()
    {
        using TmpfsMount? mount = TmpfsMount.TryMount("256k", out string reason);
        if (mount is null)
        {
            SkipReport.Print(output, nameof(On_a_full_disk_no_acknowledged_record_is_lost_and_every_failure_is_reported), reason);
            return;
        }
        string path = mount.File("log");
        using SafeFileHandle handle = OpenLog(path);
        var writer = new AppendLogWriter(handle);
        var acknowledged = new System.Collections.Concurrent.ConcurrentBag<string>();
        int failures = 0;
        await Task.WhenAll(Enumerable.Range(0, 16).Select(w => Task.Run(async () =>
        {
            for (int n = 0; n < 400; n++)
            {
                string record = $"w{w}-r{n}-" + new string('y', 100);
                try
                {
                    await writer.AppendDurableAsync(Encoding.ASCII.GetBytes(record));
                    acknowledged.Add(record);
                }
                catch (IOException e) when ((e.HResult & 0xFFFF) == 28) // ENOSPC
                {
                    Interlocked.Increment(ref failures);
                }
            }
        }))).WaitAsync(Timeout);

        Assert.True(failures > 0, "the tmpfs should have filled up");
        var inFile = AppendLog.ReadAll(path).Records.Select(r => Encoding.ASCII.GetString(r.Span)).ToHashSet();
        Assert.All(acknowledged, r => Assert.Contains(r, inFile));
        Assert.Equal(16 * 400, acknowledged.Count + failures);
    }

    [Fact]
    public void No_caller_can_queue_the_writers_drain_loop()
    {
        // The pool threads' work item is private: a public IThreadPoolWorkItem would let anyone run commits.
        Assert.False(typeof(IThreadPoolWorkItem).IsAssignableFrom(typeof(AppendLogWriter)));
        Assert.Empty(typeof(AppendLogWriter).GetInterfaces());
    }

    [Fact]
    public void A_huge_record_does_not_keep_its_buffer_once_small_records_follow()
    {
        // In a process of its own, so that the heap holds nothing but this writer's work.
        using var dir = new TempDirectory();
        (int exit, string childOutput) = ChildProcess.Run(typeof(GroupCommitTests), nameof(HugeRecordThenSmallOnesInChild), null, dir.File("log"));
        output.WriteLine(childOutput);
        Assert.True(exit == 0, childOutput);
    }

    private const int HugeRecord = 64 << 20;
    private const int SmallRecords = 100;

    public static int HugeRecordThenSmallOnesInChild(string[] args)
    {
        string path = args[0];
        using SafeFileHandle handle = OpenLog(path);
        var writer = new AppendLogWriter(handle);
        writer.AppendDurableAsync(new byte[] { 0 }).AsTask().GetAwaiter().GetResult();
        long before = LiveHeapBytes();
        AppendHuge(writer);
        for (int i = 1; i <= SmallRecords; i++)
        {
            writer.AppendDurableAsync(Encoding.ASCII.GetBytes($"small {i}")).AsTask().GetAwaiter().GetResult();
        }
        long grown = LiveHeapBytes() - before;
        GC.KeepAlive(writer);
        Console.WriteLine($"live heap grew by {grown / 1024} KiB after a {HugeRecord >> 20} MiB record and {SmallRecords} small ones");

        AppendLogScan scan = AppendLog.ReadAll(path);
        byte[] expected = new byte[HugeRecord];
        new Random(6).NextBytes(expected);
        bool recordsRight = scan.Damaged.Count == 0 && scan.Records.Count == SmallRecords + 2
            && scan.Records[0].Span.SequenceEqual(new byte[] { 0 }) && scan.Records[1].Span.SequenceEqual(expected)
            && Enumerable.Range(1, SmallRecords).All(i => Encoding.ASCII.GetString(scan.Records[i + 1].Span) == $"small {i}");
        Console.WriteLine($"records right: {recordsRight}");
        return recordsRight && grown < HugeRecord / 4 ? 0 : 1;
    }

    // A method of its own, so that no slot of the caller's frame keeps the payload alive when the heap is measured.
    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    private static void AppendHuge(AppendLogWriter writer)
    {
        byte[] huge = new byte[HugeRecord];
        new Random(6).NextBytes(huge);
        writer.AppendDurableAsync(huge).AsTask().GetAwaiter().GetResult();
    }

    private static long LiveHeapBytes()
    {
        GC.Collect();
        GC.WaitForPendingFinalizers();
        return GC.GetTotalMemory(forceFullCollection: true);
    }
}
