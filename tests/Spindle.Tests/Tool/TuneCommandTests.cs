using System.Xml.Linq;
using Spindle.Tests.Infrastructure;
using Spindle.Tool.Reports;
using Spindle.Tool.Tune;

namespace Spindle.Tests.Tool;

public class TuneCommandTests
{
    [Fact]
    public void Tune_quick_with_a_small_file_recommends_settings_and_writes_the_heat_map()
    {
        using var dir = new TempDirectory();

        ToolRunner.Result result = ToolRunner.Run("tune", "--quick", "--size", "256k", "--top", "3", "--dir", dir.Path, "--out", dir.Path);

        Assert.True(result.ExitCode == 0, result.Error);
        Assert.Matches(@"recommended for writing: buffer [\d.]+ KiB, block [\d.]+ KiB, (None|SequentialScan|WriteThrough|DirectIO)", result.Out);
        Assert.Matches(@"recommended for reading: buffer [\d.]+ KiB, block [\d.]+ KiB, (None|SequentialScan|WriteThrough|DirectIO)", result.Out);
        Assert.Contains("Base line", result.Out);
        Assert.Contains(CacheInfo.L1DataBytes() > 0 ? "rule of thumb" : "L1 data cache: unknown", result.Out);

        XDocument heatMap = XDocument.Load(dir.File("tune-heatmap.svg"));
        // Two panels (write, read) of 4 × 4 cells, each with a tooltip naming its combination.
        Assert.Equal(32, heatMap.Descendants().Count(e => e.Name.LocalName == "title"));
        Assert.Equal(["tune-heatmap.svg"], Directory.GetFiles(dir.Path).Select(Path.GetFileName));
    }

    [Fact]
    public void Tune_measures_every_direct_IO_combination_even_with_sizes_that_are_not_multiples_of_4_KiB()
    {
        // O_DIRECT needs a disk file system: next to the test binaries.
        using var dir = new TempDirectory(AppContext.BaseDirectory);
        int[] sizes = [1000, 1024, 2048, 4096, 6000];
        var grid = new TuneGrid(sizes, sizes, FileSize: 100_001, Repetitions: 1, TimeCap: TimeSpan.FromSeconds(5));
        var sweep = new TuneSweep(grid, dir.File("tune"));

        List<TuneMeasurement> results = sweep.Run(ruleOfThumb: null, new Spindle.Tool.Cli.ProgressLine(TextWriter.Null), CancellationToken.None);

        Assert.Contains(TuneOption.All, o => o.Direct);
        Assert.Equal(2 * sizes.Length * sizes.Length * TuneOption.All.Count, results.Count);
        foreach (Spindle.Workloads.Direction direction in new[] { Spindle.Workloads.Direction.Write, Spindle.Workloads.Direction.Read })
        {
            Assert.Equal(sizes.Length * sizes.Length, results.Count(r => r.Option.Direct && r.Direction == direction));
        }
    }

    [Fact]
    public void Tune_without_space_for_its_file_fails_with_a_no_space_line()
    {
        using var dir = new TempDirectory("/work");
        using var tmpfs = SmallTmpfs.TryMount(dir.Path, "1m");
        if (tmpfs is null)
        {
            Console.WriteLine("skipped: mount -t tmpfs refused, no ENOSPC file system");
            return;
        }
        ToolRunner.Result result = ToolRunner.Run("tune", "--quick", "--size", "4m", "--dir", dir.Path, "--out", dir.Path);

        Assert.Equal(1, result.ExitCode);
        Assert.StartsWith("spindle tune: no space:", result.LastErrorLine());
        Assert.Empty(Directory.GetFiles(dir.Path));
    }

    [Fact]
    public void Tune_help_and_bad_sizes()
    {
        Assert.Equal(0, ToolRunner.Run("tune", "--help").ExitCode);
        ToolRunner.Result bad = ToolRunner.Run("tune", "--size", "lots");
        Assert.Equal(2, bad.ExitCode);
        Assert.Contains("not a size", bad.Error);
    }

    [Fact]
    public void Rule_of_thumb_takes_the_middle_of_the_seeds_ranges_in_512_byte_steps()
    {
        // 48 KiB L1d: buffer 37.5 % = 18 KiB, block 70 % = 33.6 KiB rounded down to 33.5 KiB.
        Assert.Equal((18 * 1024, 67 * 512), TuneGrid.RuleOfThumb(48 * 1024));
        Assert.Equal((12 * 1024, 22 * 1024), TuneGrid.RuleOfThumb(32 * 1024));
    }

    [Fact]
    public void Cache_sizes_from_sysfs_parse()
    {
        Assert.Equal(48 * 1024, CacheInfo.ParseSize("48K\n"));
        Assert.Equal(1024 * 1024, CacheInfo.ParseSize("1M"));
        Assert.Equal(0, CacheInfo.ParseSize("lots"));
    }
}
