using Microsoft.Win32.SafeHandles;
using Spindle.Interop;
using Spindle.Tests.Infrastructure;
using Xunit.Abstractions;

namespace Spindle.Tests.Beyond;

public class AtomicAppendTests
{
    private readonly ITestOutputHelper _output;

    public AtomicAppendTests(ITestOutputHelper output) => _output = output;

    internal static SafeFileHandle OpenAppend(string path, FileMode mode = FileMode.OpenOrCreate) =>
        SpindleFile.OpenHandle(path, new SpindleFileOptions { Mode = mode, Access = FileAccess.Write, Share = FileShare.ReadWrite, AtomicAppend = true });

    [Fact]
    public void AtomicAppend_opens_with_O_APPEND_and_writes_land_at_the_end_whatever_the_offset()
    {
        using var dir = new TempDirectory();
        string path = dir.File("log");
        File.WriteAllText(path, "0123456789");
        using (SafeFileHandle handle = OpenAppend(path))
        {
            int flags = Libc.Fcntl((int)handle.DangerousGetHandle(), LinuxConstants.F_GETFL, 0);
            Assert.NotEqual(0, flags & OpenFlags.O_APPEND);

            SpindleRandomAccess.Write(handle, "abc"u8, 0);
            SpindleRandomAccess.Write(handle, "de"u8, 3);
            SpindleRandomAccess.Write(handle, new ReadOnlyMemory<byte>[] { "f"u8.ToArray(), "g"u8.ToArray() }, 1);
        }
        Assert.Equal("0123456789abcdefg", File.ReadAllText(path));

        using SafeFileHandle plain = SpindleFile.OpenHandle(path, FileMode.Open, FileAccess.Write);
        Assert.Equal(0, Libc.Fcntl((int)plain.DangerousGetHandle(), LinuxConstants.F_GETFL, 0) & OpenFlags.O_APPEND);
    }

    [Fact]
    public async Task AtomicAppend_async_writes_land_at_the_end_too()
    {
        using var dir = new TempDirectory();
        string path = dir.File("log");
        File.WriteAllText(path, "start:");
        using (SafeFileHandle handle = OpenAppend(path))
        {
            await SpindleRandomAccess.WriteAsync(handle, "one;"u8.ToArray(), 0);
            await SpindleRandomAccess.WriteAsync(handle, "two;"u8.ToArray(), 2);
        }
        Assert.Equal("start:one;two;", File.ReadAllText(path));
    }

    [Fact]
    public void AtomicAppend_without_write_access_or_with_direct_IO_is_rejected_before_opening()
    {
        using var dir = new TempDirectory();
        File.WriteAllText(dir.File("f"), "x");
        var options = new SpindleFileOptions { Mode = FileMode.Open, Access = FileAccess.Read, AtomicAppend = true };
        ArgumentException e = Assert.Throws<ArgumentException>(() => SpindleFile.OpenHandle(dir.File("f"), options));
        Assert.Contains("AtomicAppend", e.Message);

        options = new SpindleFileOptions { Mode = FileMode.Open, Access = FileAccess.Write, AtomicAppend = true, DirectIO = true };
        Assert.Throws<ArgumentException>(() => SpindleFile.OpenHandle(dir.File("f"), options));
        Assert.Equal("x", File.ReadAllText(dir.File("f")));
    }

    [Fact]
    public async Task Concurrent_appenders_in_one_process_keep_every_record_where_FileMode_Append_loses_some()
    {
        using var dir = new TempDirectory();
        const int Writers = 4;
        const int Records = 500;

        (int spindleIntact, int spindleDamaged) = await RunWriters(dir.File("spindle"), Writers, Records, (path, writer) =>
        {
            using SafeFileHandle handle = OpenAppend(path);
            var random = new Random(writer);
            for (int i = 0; i < Records; i++)
            {
                SpindleRandomAccess.Write(handle, AppendRecords.Make(writer, i, random.Next(1, 400)), 0);
            }
        });
        (int systemIntact, int systemDamaged) = await RunWriters(dir.File("system"), Writers, Records, (path, writer) =>
        {
            using var stream = new FileStream(path, FileMode.Append, FileAccess.Write, FileShare.ReadWrite, bufferSize: 0);
            var random = new Random(writer);
            for (int i = 0; i < Records; i++)
            {
                stream.Write(AppendRecords.Make(writer, i, random.Next(1, 400)));
            }
        });

        _output.WriteLine($"AtomicAppend: {spindleIntact}/{Writers * Records} records intact, {spindleDamaged} damaged lines");
        _output.WriteLine($"System.IO FileMode.Append: {systemIntact}/{Writers * Records} records intact, {systemDamaged} damaged lines");
        Assert.Equal(Writers * Records, spindleIntact);
        Assert.Equal(0, spindleDamaged);
    }

    private static async Task<(int Intact, int Damaged)> RunWriters(string path, int writers, int records, Action<string, int> write)
    {
        File.WriteAllBytes(path, []);
        using var start = new Barrier(writers);
        Task[] tasks = Enumerable.Range(0, writers).Select(writer => Task.Factory.StartNew(() =>
        {
            start.SignalAndWait();
            write(path, writer);
        }, TaskCreationOptions.LongRunning)).ToArray();
        await Task.WhenAll(tasks).WaitAsync(TimeSpan.FromSeconds(30));
        (Dictionary<int, HashSet<int>> intact, int damaged) = AppendRecords.Check(File.ReadAllBytes(path));
        return (intact.Values.Sum(s => s.Count), damaged);
    }
}
