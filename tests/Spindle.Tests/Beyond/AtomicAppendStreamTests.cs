using Spindle.Diagnostics;
using Spindle.Tests.Infrastructure;
using Xunit.Abstractions;

namespace Spindle.Tests.Beyond;

[Collection(MeterCollection.Name)]
public class AtomicAppendStreamTests
{
    private const int Children = 4;
    private const int RecordsPerChild = 1500;

    private readonly ITestOutputHelper _output;

    public AtomicAppendStreamTests(ITestOutputHelper output) => _output = output;

    private static SpindleFileStream OpenAppend(string path, FileAccess access = FileAccess.ReadWrite, int bufferSize = 4096) => new(path, new SpindleFileOptions
    {
        Mode = FileMode.OpenOrCreate,
        Access = access,
        Share = FileShare.ReadWrite,
        BufferSize = bufferSize,
        AtomicAppend = true,
    });

    [Fact]
    public void Writes_land_at_the_end_and_the_position_follows_them_while_reads_use_the_position()
    {
        using var dir = new TempDirectory();
        string path = dir.File("log");
        File.WriteAllText(path, "0123456789");
        using SpindleFileStream stream = OpenAppend(path);

        byte[] three = new byte[3];
        Assert.Equal(3, stream.Read(three));
        Assert.Equal("012"u8.ToArray(), three);
        Assert.Equal(3, stream.Position);

        stream.Write("abc"u8);
        Assert.Equal(13, stream.Position); // reading Position flushed: the write ended at 13
        Assert.Equal(13, stream.Length);

        stream.Seek(2, SeekOrigin.Begin);
        Assert.Equal(2, stream.Read(three.AsSpan(0, 2)));
        Assert.Equal("23"u8.ToArray(), three[..2]);

        // Another writer appends; our next write still lands at the very end, and the position follows it.
        using (var other = new FileStream(path, FileMode.Append, FileAccess.Write, FileShare.ReadWrite))
        {
            other.Write("XYZ"u8);
        }
        stream.Write("d"u8);
        Assert.Equal(17, stream.Position);
        stream.Dispose();
        Assert.Equal("0123456789abcXYZd", File.ReadAllText(path));
    }

    [Fact]
    public void Each_flush_is_one_write_and_a_record_that_fits_the_buffer_is_never_split()
    {
        using var dir = new TempDirectory();
        string path = dir.File("log");
        byte[] record = CopyTests.RandomBytes(1500, 1);
        MetricsSnapshot before;
        using (SpindleFileStream stream = OpenAppend(path, FileAccess.Write, bufferSize: 4096))
        {
            before = SpindleTotals.Snapshot();
            stream.Write(record); // buffered: 1500
            stream.Write(record); // buffered: 3000
            MetricsSnapshot buffered = SpindleTotals.Snapshot();
            Assert.Equal(before.Operations, buffered.Operations);
            stream.Write(record); // does not fit beside 3000: the 3000 go out in one write, this one waits whole
            MetricsSnapshot flushed = SpindleTotals.Snapshot();
            Assert.Equal(before.Operations + 1, flushed.Operations);
            Assert.Equal(before.Bytes + 3000, flushed.Bytes);
            stream.Write(CopyTests.RandomBytes(5000, 2)); // larger than the buffer: 1500 out, then 5000 in one write
            MetricsSnapshot large = SpindleTotals.Snapshot();
            Assert.Equal(flushed.Operations + 2, large.Operations);
            Assert.Equal(flushed.Bytes + 6500, large.Bytes);
        }
        Assert.Equal(9500, new FileInfo(path).Length);
    }

    [Fact]
    public void Several_processes_appending_concurrently_keep_every_record_intact()
    {
        using var dir = new TempDirectory();
        (int intact, int damaged) = RunChildren(dir, "spindle");
        (int systemIntact, int systemDamaged) = RunChildren(dir, "system");

        _output.WriteLine($"{Children} processes x {RecordsPerChild} records of 1-300 bytes:");
        _output.WriteLine($"  SpindleFileStream AtomicAppend: {intact} intact, {damaged} damaged, {Children * RecordsPerChild - intact} lost");
        _output.WriteLine($"  System.IO FileMode.Append:      {systemIntact} intact, {systemDamaged} damaged, {Children * RecordsPerChild - systemIntact} lost");
        Assert.Equal(Children * RecordsPerChild, intact);
        Assert.Equal(0, damaged);
    }

    private (int Intact, int Damaged) RunChildren(TempDirectory dir, string mode)
    {
        string path = dir.File(mode + ".log");
        string go = path + ".go";
        File.WriteAllBytes(path, []);
        Task<(int ExitCode, string Output)>[] children = Enumerable.Range(0, Children)
            .Select(writer => Task.Run(() => ChildProcess.Run(typeof(AtomicAppendStreamTests), nameof(AppendInChild), null,
                path, mode, writer.ToString(), RecordsPerChild.ToString(), go)))
            .ToArray();
        // Start them together, so that their writes overlap.
        DateTime deadline = DateTime.UtcNow.AddSeconds(60);
        while (Enumerable.Range(0, Children).Any(writer => !File.Exists($"{path}.ready{writer}")) && DateTime.UtcNow < deadline &&
            !children.Any(child => child.IsCompleted))
        {
            Thread.Sleep(5);
        }
        File.WriteAllBytes(go, []);
        Assert.True(Task.WaitAll(children, TimeSpan.FromSeconds(90)), "the children did not finish");
        foreach (var child in children)
        {
            Assert.True(child.Result.ExitCode == 0, child.Result.Output);
        }
        (Dictionary<int, HashSet<int>> intact, int damaged) = AppendRecords.Check(File.ReadAllBytes(path));
        return (intact.Values.Sum(s => s.Count), damaged);
    }

    /// <summary>The child: appends records of random length, each with one Write call, to a shared file.</summary>
    public static int AppendInChild(string[] args)
    {
        string path = args[0];
        string mode = args[1];
        int writer = int.Parse(args[2]);
        int records = int.Parse(args[3]);
        string go = args[4];
        using Stream stream = mode == "spindle"
            ? OpenAppend(path, FileAccess.Write)
            : new FileStream(path, FileMode.Append, FileAccess.Write, FileShare.ReadWrite, 4096);
        File.WriteAllBytes($"{path}.ready{writer}", []);
        while (!File.Exists(go))
        {
            Thread.Sleep(1);
        }
        var random = new Random(writer * 7919 + 1);
        for (int i = 0; i < records; i++)
        {
            stream.Write(AppendRecords.Make(writer, i, random.Next(1, 300)));
        }
        return 0;
    }
}
