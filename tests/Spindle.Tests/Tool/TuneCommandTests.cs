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
        Assert.Matches(@"recommended for writing: buffer [\d.]+ KiB, block [\d.]+ KiB, (None|WriteThrough|DirectIO) \([^)]*±[\d.]+ %", result.Out);
        Assert.Matches(@"recommended for reading: buffer [\d.]+ KiB, block [\d.]+ KiB, (None|SequentialScan|DirectIO) \([^)]*±[\d.]+ %", result.Out);
        // The read case is named, and each recommendation says whether it tied.
        Assert.Contains("reads: cold", result.Out);
        Assert.Equal(2, System.Text.RegularExpressions.Regex.Matches(result.Out, "settings tie within the noise|a clear winner").Count);
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
        Assert.Equal(2 * sizes.Length * sizes.Length * 3, results.Count);
        foreach (Spindle.Workloads.Direction direction in new[] { Spindle.Workloads.Direction.Write, Spindle.Workloads.Direction.Read })
        {
            Assert.Equal(sizes.Length * sizes.Length, results.Count(r => r.Option.Direct && r.Direction == direction));
        }
        // Only options that do something for the direction: no write-through for reads, no read-ahead hint for writes.
        Assert.DoesNotContain(results, r => r.Direction == Spindle.Workloads.Direction.Read && r.Option == TuneOption.WriteThrough);
        Assert.DoesNotContain(results, r => r.Direction == Spindle.Workloads.Direction.Write && r.Option == TuneOption.SequentialScan);
        // The finalists ran again side by side and carry their noise.
        Assert.Equal(2 * grid.Finalists, results.Count(r => r.Final));
        Assert.All(results.Where(r => r.Final), r => Assert.True(r.Passes == grid.FinalRounds && double.IsFinite(r.Spread)));
    }

    private static TuneMeasurement Cell(int buffer, int block, TuneOption option, double ms, double spread = 0.02) =>
        new(Spindle.Workloads.Direction.Write, buffer, block, 1, option, TimeSpan.FromMilliseconds(ms), false) { Final = true, Passes = 7, Spread = spread };

    [Fact]
    public void Settings_within_the_noise_tie_and_the_stated_rule_picks_no_option_then_the_smaller_buffer()
    {
        // The fastest is 16 KiB/256 KiB WriteThrough; three others are within 5 %: the rule takes None, then the smaller buffer.
        TuneChoice choice = TuneChoice.From(
        [
            Cell(16384, 262144, TuneOption.WriteThrough, 10.0),
            Cell(65536, 262144, TuneOption.None, 10.2),
            Cell(4096, 262144, TuneOption.None, 10.4),
            Cell(4096, 65536, TuneOption.DirectIO, 10.1),
            Cell(4096, 4096, TuneOption.None, 14.0),
        ]);
        Assert.Equal(10.0, choice.Fastest.Time.TotalMilliseconds);
        Assert.Equal((4096, 262144, TuneOption.None), (choice.Pick.Buffer, choice.Pick.Block, choice.Pick.Option));
        Assert.Equal(4, choice.Tied.Count);
        Assert.DoesNotContain(choice.Tied, m => m.Block == 4096);

        // The same cells measured again with other noise inside the tie give the same pick.
        TuneChoice again = TuneChoice.From(
        [
            Cell(16384, 262144, TuneOption.WriteThrough, 10.3),
            Cell(65536, 262144, TuneOption.None, 10.0),
            Cell(4096, 262144, TuneOption.None, 10.1),
            Cell(4096, 65536, TuneOption.DirectIO, 10.4),
            Cell(4096, 4096, TuneOption.None, 13.5),
        ]);
        Assert.Equal(choice.Pick with { Time = again.Pick.Time }, again.Pick);

        // A noisy fastest cell widens the tie: its spread counts.
        TuneChoice noisy = TuneChoice.From([Cell(4096, 4096, TuneOption.DirectIO, 10.0, spread: 0.15), Cell(65536, 65536, TuneOption.None, 11.2)]);
        Assert.Equal(TuneOption.None, noisy.Pick.Option);
        // A clear winner stands alone.
        TuneChoice clear = TuneChoice.From([Cell(4096, 4096, TuneOption.DirectIO, 10.0), Cell(65536, 65536, TuneOption.None, 13.0)]);
        Assert.Single(clear.Tied);
        Assert.Equal(TuneOption.DirectIO, clear.Pick.Option);
    }

    [Fact]
    public void Tune_reads_case_must_be_cold_or_warm()
    {
        ToolRunner.Result bad = ToolRunner.Run("tune", "--reads", "tepid");
        Assert.Equal(2, bad.ExitCode);
        Assert.Contains("--reads takes cold or warm", bad.Error);
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
