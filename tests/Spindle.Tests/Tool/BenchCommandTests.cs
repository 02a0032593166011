using System.Text.Json;
using System.Xml.Linq;
using Spindle.Tests.Infrastructure;

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
            JsonElement results = row.GetProperty("results");
            double systemIO = results.GetProperty("System.IO").GetProperty("medianNs").GetDouble();
            double spindle = results.EnumerateObject().Where(r => r.Name != "System.IO").Min(r => r.Value.GetProperty("medianNs").GetDouble());
            Assert.True(systemIO > 0 && spindle > 0);
            Assert.Equal(spindle / systemIO, row.GetProperty("ratio").GetDouble(), 0.02);
        }
        JsonElement read1M = rows.Single(r => r.GetProperty("name").GetString() == "RandomAccess.Read(1 MiB, 4 KiB)");
        Assert.Equal(256, read1M.GetProperty("callsPerInvocation").GetInt64());
        JsonElement randomRead = rows.Single(r => r.GetProperty("name").GetString()!.StartsWith("RandomRead4K", StringComparison.Ordinal));
        Assert.Equal(4, randomRead.GetProperty("results").EnumerateObject().Count());
        Assert.Equal("n/a (--no-fio)", randomRead.GetProperty("fioNote").GetString());

        string markdown = File.ReadAllText(dir.File("bench-report.md"));
        XDocument svg = XDocument.Load(dir.File("bench-report.svg"));
        string[] svgTexts = svg.Descendants().Where(e => e.Name.LocalName == "text").Select(e => e.Value).ToArray();
        foreach (string row in expectedRows)
        {
            Assert.Contains($"| {row} |", markdown);
            Assert.Contains(row, svgTexts);
        }
        Assert.Equal(expectedRows.Length, svg.Descendants().Count(e => e.Name.LocalName == "rect" && e.Attribute("fill")?.Value is "#3a9d5d" or "#d0534a"));
        // The benchmark files are gone; only the reports stay.
        Assert.Equal(["bench-report.json", "bench-report.md", "bench-report.svg"], Directory.GetFiles(dir.Path).Select(Path.GetFileName).Order());
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
    public void Unknown_command_and_no_command_are_usage_errors_and_help_lists_the_commands()
    {
        Assert.Equal(2, ToolRunner.Run("frobnicate").ExitCode);
        Assert.Equal(2, ToolRunner.Run().ExitCode);
        ToolRunner.Result help = ToolRunner.Run("--help");
        Assert.Equal(0, help.ExitCode);
        Assert.Contains("bench", help.Out);
        Assert.Contains("tune", help.Out);
    }
}
