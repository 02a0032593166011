using Spindle.Benchmarks.Workloads;
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
    public void Fio_jobs_name_the_engine_depth_and_direct_flag()
    {
        var job = new FioJob("randread", 4096, "io_uring", 32, Direct: true, "/data/f", 1L << 30);
        Assert.Equal(
            "fio --name=spindle --filename=/data/f --rw=randread --bs=4096 --size=1073741824 --ioengine=io_uring --iodepth=32 --direct=1 --invalidate=1 --runtime=5 --time_based --output-format=json",
            job.CommandLine(5));
    }
}
