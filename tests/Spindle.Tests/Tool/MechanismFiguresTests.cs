using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Xunit.Abstractions;
using Spindle.Tests.Infrastructure;
using Spindle.Tool.Bench;
using Spindle.Workloads;

namespace Spindle.Tests.Tool;

/// <summary>
/// The figures that show the hand-offs: context switches and io_uring_enter calls per operation, for the contenders
/// (getrusage, Spindle's meter) and for fio (its JSON's <c>ctx</c>, perf's count of its enters).
/// </summary>
// Context switches are counted for the whole process (getrusage): other tests running beside it would add theirs.
[Collection(Spindle.Tests.Engines.SerialCollection.Name)]
public class MechanismFiguresTests(ITestOutputHelper output)
{
    // A real run, kept as fio printed it: fio-3.33, io_uring, 4 KiB O_DIRECT random reads at depth 8 for 1 s, under
    // `perf stat -x, -e syscalls:sys_enter_io_uring_enter` (whose output is the other file).
    private static string Sample(string name) => File.ReadAllText(Path.Combine(AppContext.BaseDirectory, "Tool", "Data", name));

    private const long SampleIos = 42987, SampleContextSwitches = 5369, SampleEnters = 48348;

    [Fact]
    public void Fio_json_of_a_real_run_gives_context_switches_and_ios()
    {
        FioResult read = FioRunner.Parse(Sample("fio-io_uring-randread-qd8.json"), "fio …", "read");

        Assert.Equal(SampleIos, read.Operations);
        Assert.Equal((double)SampleContextSwitches / SampleIos, read.ContextSwitchesPerOperation, 12);
        // usr_cpu + sys_cpu (% of one CPU) over job_runtime 1003 ms, per I/O.
        Assert.Equal((3.988036 + 19.341974) / 100 * 1003e6 / SampleIos, read.CpuNsPerOperation, 6);
        Assert.True(double.IsNaN(read.RingEntersPerOperation), "fio's JSON has no count of its enters; perf gives it");
        // The side without I/O has none.
        Assert.True(double.IsNaN(FioRunner.Parse(Sample("fio-io_uring-randread-qd8.json"), "fio …", "write").ContextSwitchesPerOperation));
    }

    [Fact]
    public void Perf_output_gives_the_count_of_io_uring_enter_calls()
    {
        Assert.Equal(SampleEnters, PerfEnterCounter.Parse(Sample("perf-stat-io_uring_enter.csv")));
        // perf's ways of saying it has no figure, and another event's line, give none.
        Assert.Equal(-1, PerfEnterCounter.Parse("# started on …\n\n<not supported>,,syscalls:sys_enter_io_uring_enter,0,100.00,,\n"));
        Assert.Equal(-1, PerfEnterCounter.Parse("<not counted>,,syscalls:sys_enter_io_uring_enter,0,0.00,,\n"));
        Assert.Equal(-1, PerfEnterCounter.Parse("13204,,syscalls:sys_enter_read,506960829,100.00,,\n"));
        Assert.Equal(-1, PerfEnterCounter.Parse(""));
    }

    [Fact]
    public async Task An_io_uring_fio_job_runs_under_perf_and_reports_enters_per_io()
    {
        using var dir = new TempDirectory();
        File.WriteAllText(dir.File("fio.json"), Sample("fio-io_uring-randread-qd8.json"));
        File.WriteAllText(dir.File("perf.csv"), Sample("perf-stat-io_uring_enter.csv"));
        // perf standing in: logs its arguments, copies the captured count where -o says, runs what follows "--".
        Script(dir.File("perf"), $"echo \"$@\" >> '{dir.File("perf.log")}'\n"
            + "while [ \"$1\" != \"--\" ]; do if [ \"$1\" = \"-o\" ]; then out=\"$2\"; fi; shift; done; shift\n"
            + $"cp '{dir.File("perf.csv")}' \"$out\"\nexec \"$@\"");
        Script(dir.File("true"), "exit 0");
        string fio = Script(dir.File("fio"), $"cat '{dir.File("fio.json")}'");
        PerfEnterCounter perf = PerfEnterCounter.Locate(dir.Path) ?? throw new InvalidOperationException("the stand-in perf was not taken");

        FioResult uring = await FioRunner.RunAsync(fio, new FioJob("randread", 4096, "io_uring", 8, Direct: true, dir.File("f"), 1 << 20), TimeSpan.FromSeconds(1),
            CancellationToken.None, perf);
        int runsUnderPerf = File.ReadAllLines(dir.File("perf.log")).Length;
        FioResult psync = await FioRunner.RunAsync(fio, new FioJob("randread", 4096, "psync", 1, Direct: true, dir.File("f"), 1 << 20), TimeSpan.FromSeconds(1),
            CancellationToken.None, perf);

        Assert.Equal((double)SampleEnters / SampleIos, uring.RingEntersPerOperation, 12);
        Assert.Equal(SampleIos, uring.Operations);
        Assert.Contains($"stat -x, -e {PerfEnterCounter.Event} -o", File.ReadAllLines(dir.File("perf.log")).Last());
        // A psync job makes no io_uring_enter calls: it runs without perf.
        Assert.True(double.IsNaN(psync.RingEntersPerOperation));
        Assert.Equal(runsUnderPerf, File.ReadAllLines(dir.File("perf.log")).Length);
    }

    [Fact]
    public void Without_perf_on_the_path_fio_runs_without_counting_enters()
    {
        using var dir = new TempDirectory();
        Assert.Null(PerfEnterCounter.Locate(dir.Path));
        Assert.Null(FioRunner.Locate(dir.Path));
    }

    [Fact]
    public async Task The_harness_counts_the_context_switches_of_each_operation()
    {
        // System.IO's turn sleeps (a voluntary switch each time, whatever the machine's load); Spindle's does nothing.
        using var row = new SleepOrNothing();
        var settings = new HarnessSettings(7, TimeSpan.Zero, TimeSpan.Zero, TimeSpan.FromSeconds(1));

        IReadOnlyList<ContenderResult> results = await Harness.MeasureAsync(row, settings, CancellationToken.None);

        ContenderResult sleeper = results.Single(r => r.Contender == Contender.SystemIO), idle = results.Single(r => r.Contender == Contender.SpindleAuto);
        output.WriteLine($"switches per operation: sleeping {sleeper.ContextSwitchesPerOperation}, idle {idle.ContextSwitchesPerOperation}");
        Assert.True(sleeper.ContextSwitchesPerOperation >= 1, $"{sleeper.ContextSwitchesPerOperation}");
        Assert.True(idle.ContextSwitchesPerOperation < sleeper.ContextSwitchesPerOperation);
    }

    [Fact]
    public async Task Ring_enters_are_read_from_Spindles_meter()
    {
        using var enters = new RingEnters();
        using var dir = new TempDirectory();
        string path = dir.File("data");
        File.WriteAllBytes(path, new byte[64 * 1024]);
        SafeFileHandle handle;
        try
        {
            handle = DirectIo.OpenHandle(path);
        }
        catch (NotSupportedException e)
        {
            output.WriteLine($"SKIPPED: {e.Message}");
            return;
        }
        using (handle)
        using (var buffer = new Spindle.Workloads.AlignedBuffer(64 * 1024, DirectIo.Alignment))
        {
            await SpindleRandomAccess.ReadAsync(handle, buffer.Memory[..4096], 0, IoEngine.Auto);   // Spindle's meter exists from here on
            long before = SpindleMetrics.Submissions;
            long read = enters.Read();
            long after = SpindleMetrics.Submissions;
            Assert.InRange(read, before, after);
            if (!SpindleRandomAccess.IsIoUringAvailable)
            {
                output.WriteLine("io_uring is not available: no enters to count");
                return;
            }
            // Sixteen reads in flight at once on the ring (a lone read may run on a pool thread instead).
            var reads = new ValueTask<int>[16];
            for (int i = 0; i < reads.Length; i++)
            {
                reads[i] = SpindleRandomAccess.ReadAsync(handle, buffer.Memory.Slice(4096 * i, 4096), 4096L * i, IoEngine.IoUring);
            }
            foreach (ValueTask<int> pending in reads)
            {
                await pending;
            }
            long afterReads = enters.Read();
            output.WriteLine($"enters: {read} before the reads, {afterReads} after");
            Assert.True(afterReads > read, "O_DIRECT reads on the ring entered the kernel");
        }
    }

    private static string Script(string path, string body)
    {
        File.WriteAllText(path, "#!/bin/sh\n" + body + "\n");
        File.SetUnixFileMode(path, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        return path;
    }

    private sealed class SleepOrNothing() : Workload("Test", "SleepOrNothing")
    {
        public override IReadOnlyList<Contender> Contenders => Workloads.Contenders.Synchronous;

        public override void Setup(BenchFiles files)
        {
        }

        public override ValueTask RunAsync(Contender contender)
        {
            if (contender == Contender.SystemIO)
            {
                Thread.Sleep(1);
            }
            return default;
        }
    }
}
