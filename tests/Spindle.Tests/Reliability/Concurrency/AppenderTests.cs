using Microsoft.Win32.SafeHandles;
using Spindle.Tests.Beyond;
using Spindle.Tests.Infrastructure;
using Xunit.Abstractions;
using static Spindle.Tests.Reliability.ReliabilityKit;

namespace Spindle.Tests.Reliability.Concurrency;

/// <summary>
/// Many appenders on one file in atomic-append mode: threads with their own handles on every way, streams,
/// and other processes at the same time. Every record arrives exactly once and none is torn.
/// </summary>
public class AppenderTests(ITestOutputHelper output)
{
    private const int Threads = 8;
    private const int RecordsPerWriter = 300;

    [Theory]
    [MemberData(nameof(WayData), MemberType = typeof(ReliabilityKit))]
    public Task Many_threads_appending_through_their_own_handles_lose_and_tear_nothing(string way) => Bounded(async () =>
    {
        IoEngine? engine = ParseWay(way);
        using var dir = new TempDirectory();
        string path = dir.File("log");
        await Task.WhenAll(Enumerable.Range(0, Threads).Select(writer => Task.Factory.StartNew(async () =>
        {
            using SafeFileHandle handle = SpindleFile.OpenHandle(path, new SpindleFileOptions
            {
                Mode = FileMode.OpenOrCreate, Access = FileAccess.Write, Share = FileShare.ReadWrite, AtomicAppend = true, Options = FileOptions.Asynchronous,
            });
            var random = new Random(writer);
            for (int i = 0; i < RecordsPerWriter; i++)
            {
                byte[] record = AppendRecords.Make(writer, i, random.Next(0, 3000));
                if (i % 3 == 2)
                {
                    // A record in two gathered pieces must still land as one.
                    await WriteGatherAsyncOrSync(handle, [record.AsMemory(0, record.Length / 2), record.AsMemory(record.Length / 2)], 0, engine);
                }
                else
                {
                    await WriteAsyncOrSync(handle, record, 0, engine); // the offset is ignored: O_APPEND
                }
            }
        }, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default).Unwrap()));

        AssertAllRecords(File.ReadAllBytes(path), Threads);
    });

    [Fact]
    public Task Appending_streams_in_this_process_and_appenders_in_two_other_processes_lose_and_tear_nothing() => Bounded(async () =>
    {
        using var dir = new TempDirectory();
        string path = dir.File("log");
        File.WriteAllBytes(path, []);
        // Writers 0-3: streams here (buffer larger than any record, so each flush is one write); 4 and 5: child processes.
        Task<(int, string)>[] children = [.. Enumerable.Range(4, 2).Select(w => Task.Run(() => ChildProcess.Run(typeof(AppenderTests), nameof(ChildAppends), null, path, w.ToString())))];
        await Task.WhenAll(Enumerable.Range(0, 4).Select(writer => Task.Run(async () =>
        {
            await using var stream = new SpindleFileStream(path, new SpindleFileOptions
            {
                Mode = FileMode.Open, Access = FileAccess.Write, Share = FileShare.ReadWrite, AtomicAppend = true, BufferSize = 8192,
                Engine = Enum.GetValues<IoEngine>()[writer % 4],
            });
            var random = new Random(writer);
            for (int i = 0; i < RecordsPerWriter; i++)
            {
                await stream.WriteAsync(AppendRecords.Make(writer, i, random.Next(0, 3000)));
                await stream.FlushAsync(); // one record per write, interleaving with the other writers
            }
        })));
        foreach ((int code, string text) in await Task.WhenAll(children))
        {
            Assert.True(code == 0, text);
        }
        AssertAllRecords(File.ReadAllBytes(path), 6);
    });

    /// <summary>Child process: appends <see cref="RecordsPerWriter"/> records as writer args[1] to the file args[0].</summary>
    public static int ChildAppends(string[] args)
    {
        int writer = int.Parse(args[1]);
        using SafeFileHandle handle = SpindleFile.OpenHandle(args[0], new SpindleFileOptions
        {
            Mode = FileMode.Open, Access = FileAccess.Write, Share = FileShare.ReadWrite, AtomicAppend = true,
        });
        var random = new Random(writer);
        for (int i = 0; i < RecordsPerWriter; i++)
        {
            SpindleRandomAccess.Write(handle, AppendRecords.Make(writer, i, random.Next(0, 3000)), 0);
        }
        return 0;
    }

    private void AssertAllRecords(byte[] file, int writers)
    {
        (Dictionary<int, HashSet<int>> intact, int damaged) = AppendRecords.Check(file);
        Assert.Equal(0, damaged);
        for (int w = 0; w < writers; w++)
        {
            Assert.True(intact.TryGetValue(w, out HashSet<int>? seen) && seen.Count == RecordsPerWriter,
                $"writer {w}: {(intact.TryGetValue(w, out HashSet<int>? s) ? s.Count : 0)} of {RecordsPerWriter} records on disk");
        }
        output.WriteLine($"{writers} writers, {writers * RecordsPerWriter} records, {file.Length} bytes, none lost or torn");
    }
}
