using System.Text.Json;
using System.Xml.Linq;
using Spindle.Tests.Infrastructure;
using Spindle.Tool.Reports;

namespace Spindle.Tests.Tool;

public class BenchCommandTests
{
    // A tiny matrix: a few RandomAccess rows and one random-read row with a fio column.
    private static readonly string[] TinyMatrix =
        ["--quick", "--rounds", "2", "--no-fio", "--filter", "RandomAccess.Read(1 MiB*|RandomAccess.WriteAsync(1 MiB*|ReadScatter(4×4 KiB)|RandomRead4K.Cached(QD 8*"];

    [Fact]
    public void Bench_with_a_tiny_matrix_writes_three_reports_that_parse_and_contain_every_row()
    {
        using var dir = new TempDirectory();
        string[] expectedRows = ToolRunner.Run(["bench", "--list", .. TinyMatrix]).Out
            .Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        Assert.Equal(4, expectedRows.Length);

        ToolRunner.Result result = ToolRunner.Run(["bench", .. TinyMatrix, "--dir", dir.Path, "--out", dir.Path]);

        Assert.True(result.ExitCode == 0, result.Error);
        foreach (string row in expectedRows)
        {
            Assert.Contains(row, result.Out);
        }
        Assert.Contains("row 4 of 4", result.Error);

        using JsonDocument json = JsonDocument.Parse(File.ReadAllText(dir.File("bench-report.json")));
        JsonElement[] rows = json.RootElement.GetProperty("rows").EnumerateArray().ToArray();
        Assert.Equal(expectedRows, rows.Select(r => r.GetProperty("name").GetString()));
        foreach (JsonElement row in rows)
        {
            // The headline ratio is Spindle's default engine (Auto) against System.IO, never the fastest engine.
            JsonElement results = row.GetProperty("results");
            double systemIO = results.GetProperty("System.IO").GetProperty("medianNs").GetDouble();
            double auto = results.GetProperty("Spindle Auto").GetProperty("medianNs").GetDouble();
            Assert.True(systemIO > 0 && auto > 0);
            // The ratio is the median of the per-round ratios, inside its own interval, with a verdict.
            double ratio = row.GetProperty("autoRatio").GetDouble();
            Assert.InRange(ratio, row.GetProperty("autoRatioLow").GetDouble(), row.GetProperty("autoRatioHigh").GetDouble());
            Assert.Contains(row.GetProperty("verdict").GetString(), new[] { "faster", "equal", "slower" });
            foreach (JsonProperty contender in results.EnumerateObject())
            {
                Assert.True(contender.Value.GetProperty("cpuNsPerOperation").GetDouble() > 0, $"{row.GetProperty("name")}: {contender.Name} has no CPU time");
            }
        }
        JsonElement read1M = rows.Single(r => r.GetProperty("name").GetString() == "RandomAccess.Read(1 MiB, 4 KiB)");
        Assert.Equal(256, read1M.GetProperty("callsPerInvocation").GetInt64());
        Assert.Equal(["System.IO", "Spindle Auto"], read1M.GetProperty("results").EnumerateObject().Select(r => r.Name));
        Assert.Equal(JsonValueKind.Null, read1M.GetProperty("results").GetProperty("Spindle Auto").GetProperty("p99Ns").ValueKind);
        JsonElement randomRead = rows.Single(r => r.GetProperty("name").GetString()!.StartsWith("RandomRead4K", StringComparison.Ordinal));
        Assert.Equal(["System.IO", "Spindle Auto", "Spindle Sync", "Spindle ThreadPool", "Spindle IoUring"], randomRead.GetProperty("results").EnumerateObject().Select(r => r.Name));
        Assert.Equal("n/a (--no-fio)", randomRead.GetProperty("fioNote").GetString());
        foreach (JsonProperty contender in randomRead.GetProperty("results").EnumerateObject())
        {
            // Every read of every measured round is a latency sample: 2 rounds of whole invocations of 512 reads.
            double p50 = contender.Value.GetProperty("p50Ns").GetDouble(), p99 = contender.Value.GetProperty("p99Ns").GetDouble();
            Assert.True(p50 > 0 && p99 >= p50, $"{contender.Name}: p50 {p50}, p99 {p99}");
            Assert.True(contender.Value.GetProperty("worstNs").GetDouble() >= p99, $"{contender.Name}: the worst wait is below p99");
            // The hand-offs as counts per read, measured for every contender: context switches of the process and
            // Spindle's io_uring_enter calls (a JSON null, for a figure not measured, would throw here).
            Assert.True(contender.Value.GetProperty("contextSwitchesPerOperation").GetDouble() >= 0, contender.Name);
            Assert.True(contender.Value.GetProperty("ioUringEntersPerOperation").GetDouble() >= 0, contender.Name);
            Assert.Equal(0, contender.Value.GetProperty("latencySamples").GetInt32() % 512);
        }
        // The console prints the headline column and the CPU and latency table with a line per contender and fio's:
        // time, ops/s, CPU, context switches and io_uring enters per operation (numbers, measured), p50, p99, worst.
        Assert.Contains("Auto / System.IO", result.Out);
        Assert.Matches(@"RandomRead4K\.Cached\(QD 8, 64 MiB\)\s+System\.IO\s+[\d.]+ [nµm]?s\s+[\d,]+\s+[\d.]+ [nµm]?s\s+[\d.]+\s+[\d.]+\s+[\d.]+ [nµm]?s\s+[\d.]+ [nµm]?s\s+[\d.]+ [nµm]?s", result.Out);
        Assert.Matches(@"\n\s+fio\s+n/a \(--no-fio\)", result.Out);

        string markdown = File.ReadAllText(dir.File("bench-report.md"));
        XDocument svg = XDocument.Load(dir.File("bench-report.svg"));
        string[] svgTexts = svg.Descendants().Where(e => e.Name.LocalName == "text").Select(e => e.Value).ToArray();
        foreach (string row in expectedRows)
        {
            Assert.Contains($"| {row} |", markdown);
            Assert.Contains(row, svgTexts);
        }
        // One bar per row (the rects with a tooltip; the legend's squares have none), coloured by its verdict.
        XElement[] bars = svg.Descendants().Where(e => e.Name.LocalName == "rect" && e.Elements().Any(c => c.Name.LocalName == "title")).ToArray();
        Assert.Equal(expectedRows.Length, bars.Length);
        Assert.All(bars, b => Assert.Contains(b.Attribute("fill")!.Value, new[] { RatioChart.FasterColor, RatioChart.EqualColor, RatioChart.SlowerColor }));
        Assert.Contains(svgTexts, t => t.Contains("Spindle Auto", StringComparison.Ordinal));
        Assert.DoesNotContain(svgTexts, t => t.Contains("SPEC", StringComparison.Ordinal));
        Assert.Contains("## CPU, context switches and io_uring_enter calls per operation", markdown);
        Assert.DoesNotContain("## Queue-depth sweep", markdown);
        // The benchmark files are gone; only the reports stay.
        Assert.Equal(["bench-report.json", "bench-report.md", "bench-report.svg"], Directory.GetFiles(dir.Path).Select(Path.GetFileName).Order());
    }

    [Fact]
    public void Bench_sweep_rows_run_alone_and_give_a_table_and_a_chart_of_operations_per_second()
    {
        // O_DIRECT needs a disk file system: next to the test binaries.
        using var dir = new TempDirectory(AppContext.BaseDirectory);
        string[] args = ["bench", "--quick", "--rounds", "2", "--no-fio", "--filter", "Sweep*(QD 1,*|Sweep*(QD 4,*", "--dir", dir.Path, "--out", dir.Path];
        Assert.Equal(["Sweep.RandomRead4K.Direct(QD 1, 64 MiB)", "Sweep.RandomRead4K.Direct(QD 4, 64 MiB)"],
            ToolRunner.Run(["bench", "--list", .. args[1..]]).Out.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries));

        ToolRunner.Result result = ToolRunner.Run(args);

        Assert.True(result.ExitCode == 0, result.Error);
        Assert.Contains("Queue-depth sweep", result.Out);
        Assert.Matches(@"\n\s+1\s+[\d,]+\s+[\d,]+\s+n/a \(--no-fio\)\s+[\d.]+\s+n/a", result.Out);
        Assert.Matches(@"\n\s+4\s+[\d,]+\s+[\d,]+\s+n/a \(--no-fio\)", result.Out);

        using JsonDocument json = JsonDocument.Parse(File.ReadAllText(dir.File("bench-report.json")));
        JsonElement[] rows = json.RootElement.GetProperty("rows").EnumerateArray().ToArray();
        Assert.Equal([1, 4], rows.Select(r => r.GetProperty("inFlight").GetInt32()));
        Assert.All(rows, r => Assert.Equal(["System.IO", "Spindle Auto"], r.GetProperty("results").EnumerateObject().Select(c => c.Name)));

        // One line per contender that has figures (fio did not run), a point per depth.
        XDocument chart = XDocument.Load(dir.File("bench-sweep.svg"));
        XElement[] lines = chart.Descendants().Where(e => e.Name.LocalName == "polyline").ToArray();
        Assert.Equal(2, lines.Length);
        Assert.All(lines, l => Assert.Equal(2, l.Attribute("points")!.Value.Split(' ').Length));
        Assert.Equal(4, chart.Descendants().Count(e => e.Name.LocalName == "circle"));
        string markdown = File.ReadAllText(dir.File("bench-report.md"));
        Assert.Contains("## Queue-depth sweep", markdown);
        Assert.Contains("![operations per second against reads in flight](bench-sweep.svg)", markdown);
        Assert.Equal(["bench-report.json", "bench-report.md", "bench-report.svg", "bench-sweep.svg"], Directory.GetFiles(dir.Path).Select(Path.GetFileName).Order());
    }

    [Fact]
    public void Bench_cancelled_before_measuring_exits_130_and_removes_its_files()
    {
        using var dir = new TempDirectory();
        using var cancelled = new CancellationTokenSource();
        cancelled.Cancel();

        ToolRunner.Result result = ToolRunner.Run(cancelled.Token, "bench", "--quick", "--filter", "RandomAccess.Read(1 MiB*", "--dir", dir.Path, "--out", dir.Path);

        Assert.Equal(130, result.ExitCode);
        Assert.Contains("cancelled", result.LastErrorLine());
        Assert.Empty(Directory.GetFiles(dir.Path));
    }

    [Fact]
    public void Bench_cancelled_while_measuring_exits_130_and_removes_its_files()
    {
        using var dir = new TempDirectory();
        // Sixteen rows take seconds; the cancellation comes while the first ones are measured.
        using var cancellation = new CancellationTokenSource(TimeSpan.FromMilliseconds(400));

        ToolRunner.Result result = ToolRunner.Run(cancellation.Token, "bench", "--quick", "--filter", "RandomAccess.*", "--dir", dir.Path, "--out", dir.Path);

        Assert.Equal(130, result.ExitCode);
        Assert.Contains("row 1 of 16", result.Error);
        Assert.Empty(Directory.GetFiles(dir.Path));
    }

    [Fact]
    public void Bench_help_lists_its_options()
    {
        ToolRunner.Result result = ToolRunner.Run("bench", "--help");
        Assert.Equal(0, result.ExitCode);
        foreach (string option in new[] { "--quick", "--filter", "--dir", "--out" })
        {
            Assert.Contains(option, result.Out);
        }
    }

    [Fact]
    public void Bench_with_a_missing_directory_fails_with_one_line_and_exit_code_1()
    {
        ToolRunner.Result result = ToolRunner.Run("bench", "--quick", "--dir", "/nonexistent-spindle-dir");
        Assert.Equal(1, result.ExitCode);
        Assert.Equal("spindle bench: directory not found: /nonexistent-spindle-dir (--dir)", result.Error.Trim());
    }

    [Fact]
    public void Bench_with_an_unknown_option_or_an_empty_filter_is_a_usage_error()
    {
        ToolRunner.Result unknown = ToolRunner.Run("bench", "--fast");
        Assert.Equal(2, unknown.ExitCode);
        Assert.StartsWith("spindle bench: unknown option: --fast", unknown.Error);
        Assert.Single(unknown.Error.Trim().Split('\n'));

        ToolRunner.Result nothing = ToolRunner.Run("bench", "--filter", "NoSuchRow");
        Assert.Equal(2, nothing.ExitCode);
        Assert.Contains("no row matches", nothing.Error);

        // An empty pattern would match every row: it is refused, not run as the whole matrix.
        foreach (string[] empty in new[] { new[] { "bench", "--filter", "" }, ["bench", "--filter=", "--list"], ["bench", "--filter", " | "] })
        {
            ToolRunner.Result refused = ToolRunner.Run(empty);
            Assert.Equal(2, refused.ExitCode);
            Assert.Equal("spindle bench: --filter needs a pattern (leave --filter out to run every row; spindle bench --list shows them) (spindle bench --help for usage)", refused.Error.Trim());
            Assert.Equal("", refused.Out);
        }
    }

    [Fact]
    public void Bench_without_space_for_its_files_fails_with_a_no_space_line()
    {
        using var dir = new TempDirectory("/work");
        using var tmpfs = SmallTmpfs.TryMount(dir.Path, "1m");
        if (tmpfs is null)
        {
            Console.WriteLine("skipped: mount -t tmpfs refused, no ENOSPC file system");
            return;
        }
        ToolRunner.Result result = ToolRunner.Run("bench", "--quick", "--filter", "RandomAccess.Read(8 MiB*", "--dir", dir.Path, "--out", dir.Path);

        Assert.Equal(1, result.ExitCode);
        Assert.StartsWith("spindle bench: no space:", result.LastErrorLine());
        Assert.Empty(Directory.GetFiles(dir.Path));
    }

    [Fact]
    public void Unknown_command_and_no_command_are_usage_errors_on_stderr_and_help_lists_the_commands()
    {
        ToolRunner.Result unknown = ToolRunner.Run("frobnicate");
        Assert.Equal(2, unknown.ExitCode);
        Assert.Equal("", unknown.Out);
        ToolRunner.Result none = ToolRunner.Run();
        Assert.Equal(2, none.ExitCode);
        Assert.Equal("", none.Out);
        Assert.StartsWith("usage: spindle <command>", none.Error);

        ToolRunner.Result help = ToolRunner.Run("--help");
        Assert.Equal(0, help.ExitCode);
        Assert.Equal("", help.Error);
        Assert.Equal(none.Error, help.Out);
        foreach (string command in new[] { "bench", "tune", "copy" })
        {
            Assert.Contains(command, help.Out);
        }
        Assert.Contains("143 SIGTERM", help.Out);
    }

    [Theory]
    [InlineData("bench")]
    [InlineData("tune")]
    [InlineData("copy")]
    public void Every_command_has_help_in_the_users_words(string command)
    {
        ToolRunner.Result help = ToolRunner.Run(command, "--help");
        Assert.Equal(0, help.ExitCode);
        Assert.StartsWith($"usage: spindle {command}", help.Out);
        Assert.Equal(help.Out, ToolRunner.Run(command, "-h").Out);
        Assert.Equal(help.Out, ToolRunner.Run("help", command).Out);
        // Spoken to users, not to the project: no spec sections or seed numbers.
        Assert.DoesNotContain("SPEC", help.Out);
        Assert.DoesNotContain("seed", help.Out, StringComparison.OrdinalIgnoreCase);
        Assert.Contains("SIGTERM", help.Out);
    }
}
