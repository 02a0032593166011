using Spindle.Workloads;
using Spindle.Tool.Bench;
using Spindle.Tool.Cli;

namespace Spindle.Tests.Tool;

public class CliPartsTests
{
    [Theory]
    [InlineData("RandomAccess.Read", "RandomAccess.ReadAsync(1 MiB, 4 KiB)", true)]
    [InlineData("randomaccess.read", "RandomAccess.ReadAsync(1 MiB, 4 KiB)", true)]
    [InlineData("RandomAccess.Read(*", "RandomAccess.ReadAsync(1 MiB, 4 KiB)", false)]
    [InlineData("*Direct*", "RandomRead4K.Direct(QD 32, 1 GiB)", true)]
    [InlineData("Seq*|*QD 1,*", "RandomRead4K.Cached(QD 1, 1 GiB)", true)]
    [InlineData("Seq*|*QD 1,*", "RandomRead4K.Cached(QD 128, 1 GiB)", false)]
    public void Filter_matches_substrings_and_globs(string pattern, string row, bool expected) =>
        Assert.Equal(expected, new RowFilter(pattern).Matches(row));

    [Fact]
    public void Arguments_parse_options_switches_and_positionals()
    {
        Arguments line = Arguments.Parse(["a", "--dir", "/x", "--quick", "--size=4k", "b"], ["--dir", "--size"], ["--quick"]);
        Assert.Equal(["a", "b"], line.Positional);
        Assert.Equal("/x", line.Value("--dir"));
        Assert.Equal(4096, line.Size("--size", 0));
        Assert.True(line.Has("--quick"));
        Assert.False(line.Help);
        Assert.Throws<UsageException>(() => Arguments.Parse(["--dir"], ["--dir"], []));
        Assert.Throws<UsageException>(() => Arguments.Parse(["--quick=1"], [], ["--quick"]));
        Assert.Throws<UsageException>(() => Arguments.Parse(["-q"], [], ["--quick"]));
    }

    [Theory]
    [InlineData("4096", 4096L)]
    [InlineData("64k", 65536L)]
    [InlineData("30MB", 31457280L)]
    [InlineData("1g", 1073741824L)]
    public void Sizes_parse_with_binary_suffixes(string text, long expected) => Assert.Equal(expected, Units.ParseBytes(text));

    [Fact]
    public void Fio_json_gives_iops_and_bandwidth_of_the_right_side()
    {
        // The shape of `fio --output-format=json` (fio 3.x), preceded by a notice as fio sometimes prints.
        const string json = """
            note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will be capped at 1
            {
              "fio version" : "fio-3.33",
              "jobs" : [
                {
                  "jobname" : "spindle",
                  "read" : { "io_bytes" : 409600, "bw_bytes" : 409600000, "iops" : 100000.5 },
                  "write" : { "io_bytes" : 0, "bw_bytes" : 0, "iops" : 0.0 }
                }
              ]
            }
            """;
        FioResult read = FioRunner.Parse(json, "fio …", "read");
        Assert.Equal(100000.5, read.Iops);
        Assert.Equal(409600000, read.BytesPerSecond);
        Assert.Equal(1e9 / 100000.5, read.NsPerOperation, 6);
        Assert.Equal(0, FioRunner.Parse(json, "fio …", "write").Iops);
    }

    [Fact]
    public void Fio_json_gives_cpu_per_io_and_latency_percentiles_and_worst()
    {
        // Trimmed from `fio --output-format=json` (fio-3.33, io_uring, 4 KiB random reads at depth 8).
        const string json = """
            {
              "jobs" : [
                {
                  "jobname" : "spindle",
                  "job_runtime" : 1003,
                  "usr_cpu" : 4.0,
                  "sys_cpu" : 21.0,
                  "read" : {
                    "io_bytes" : 86167552, "bw_bytes" : 85824254, "iops" : 20953.187251, "runtime" : 1004, "total_ios" : 21037,
                    "clat_ns" : {
                      "min" : 30000, "max" : 20316160, "mean" : 380000.5, "N" : 21037,
                      "percentile" : { "1.000000" : 57600, "50.000000" : 136192, "90.000000" : 321536, "99.000000" : 4685824, "99.900000" : 17170432 }
                    },
                    "lat_ns" : {
                      "min" : 31000, "max" : 20320256, "mean" : 391000.5, "N" : 21037,
                      "percentile" : { "1.000000" : 58624, "50.000000" : 140288, "90.000000" : 329728, "99.000000" : 4751360, "99.900000" : 17301504 }
                    }
                  },
                  "write" : { "io_bytes" : 0, "bw_bytes" : 0, "iops" : 0.0, "runtime" : 0, "total_ios" : 0, "clat_ns" : { "min" : 0, "max" : 0, "N" : 0 } }
                }
              ]
            }
            """;
        FioResult read = FioRunner.Parse(json, "fio …", "read");
        // 25 % of one CPU for 1003 ms over 21037 reads.
        Assert.Equal(0.25 * 1003e6 / 21037, read.CpuNsPerOperation, 3);
        // The whole latency (lat_ns, asked for with --lat_percentiles=1), not the completion latency alone.
        Assert.Equal(140288, read.P50Ns);
        Assert.Equal(4751360, read.P99Ns);
        Assert.Equal(20320256, read.WorstNs);
        // Without lat_ns percentiles (an older fio, or a job without the option), the completion latency.
        FioResult completionOnly = FioRunner.Parse(json.Replace("\"lat_ns\"", "\"lat_ns_unused\""), "fio …", "read");
        Assert.Equal(136192, completionOnly.P50Ns);
        Assert.Equal(20316160, completionOnly.WorstNs);

        // A side without I/O has no CPU per I/O; fio prints no percentiles for it.
        FioResult write = FioRunner.Parse(json, "fio …", "write");
        Assert.True(double.IsNaN(write.CpuNsPerOperation));
        Assert.True(double.IsNaN(write.P50Ns) && double.IsNaN(write.P99Ns));
        Assert.True(double.IsNaN(write.WorstNs)); // its clat_ns has a max of 0 over no I/O, which is no latency
    }

    [Fact]
    public void Latency_percentiles_take_the_nearest_rank_of_the_sorted_samples()
    {
        // 1..100 ticks: the p-th percentile is the p-th smallest sample.
        long[] ticks = Enumerable.Range(1, 100).Select(i => (long)i).ToArray();
        double tick = 1e9 / System.Diagnostics.Stopwatch.Frequency;
        Assert.Equal(50 * tick, Percentiles.Nanoseconds(ticks, 50), 6);
        Assert.Equal(99 * tick, Percentiles.Nanoseconds(ticks, 99), 6);
        Assert.Equal(100 * tick, Percentiles.Nanoseconds(ticks, 100), 6);
        Assert.Equal(1 * tick, Percentiles.Nanoseconds(ticks, 0), 6);
        // Few samples: p99 of 10 is the largest, p50 the fifth.
        long[] ten = [10, 20, 30, 40, 50, 60, 70, 80, 90, 1000];
        Assert.Equal(50 * tick, Percentiles.Nanoseconds(ten, 50), 6);
        Assert.Equal(1000 * tick, Percentiles.Nanoseconds(ten, 99), 6);
        Assert.True(double.IsNaN(Percentiles.Nanoseconds([], 50)));
    }

    [Fact]
    public void Latency_recorder_keeps_every_operation_from_several_threads_up_to_its_capacity()
    {
        var recorder = new LatencyRecorder(4000);
        long start = System.Diagnostics.Stopwatch.GetTimestamp();
        Parallel.For(0, 4, _ =>
        {
            for (int i = 0; i < 1000; i++)
            {
                recorder.Record(start);
            }
        });
        Assert.Equal(4000, recorder.Recorded);
        Assert.Equal(4000, recorder.Samples.Length);
        Assert.All(recorder.Samples.ToArray(), t => Assert.True(t >= 0));

        // Beyond the capacity operations are counted, not kept; Clear starts over.
        recorder.Record(start);
        Assert.Equal(4001, recorder.Recorded);
        Assert.Equal(4000, recorder.Samples.Length);
        recorder.Clear();
        Assert.Equal(0, recorder.Samples.Length);
    }

    [Fact]
    public void Axis_steps_are_one_two_or_five_times_a_power_of_ten()
    {
        Assert.Equal(20_000, Spindle.Tool.Reports.SweepChart.NiceStep(15_600));
        Assert.Equal(50, Spindle.Tool.Reports.SweepChart.NiceStep(31));
        Assert.Equal(1, Spindle.Tool.Reports.SweepChart.NiceStep(1));
        Assert.Equal(0.5, Spindle.Tool.Reports.SweepChart.NiceStep(0.3), 9);
    }

    [Fact]
    public void Fio_jobs_name_the_engine_depth_and_direct_flag()
    {
        var job = new FioJob("randread", 4096, "io_uring", 32, Direct: true, "/data/f", 1L << 30);
        Assert.Equal(
            "fio --name=spindle --filename=/data/f --rw=randread --bs=4096 --size=1073741824 --ioengine=io_uring --iodepth=32 --direct=1 --invalidate=1 --runtime=5 --time_based --output-format=json --lat_percentiles=1",
            job.CommandLine(TimeSpan.FromSeconds(5)));
    }
}
