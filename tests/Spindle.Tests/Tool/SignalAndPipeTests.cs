using System.Diagnostics;
using Spindle.Tests.Infrastructure;
using Spindle.Tool.Cli;

namespace Spindle.Tests.Tool;

/// <summary>The tool as scripts and CI run it: stopped by signals, its standard error in a pipe.</summary>
public class SignalAndPipeTests
{
    private const int SigInt = 2;
    private const int SigTerm = 15;

    [Theory]
    [InlineData(SigTerm, 143, "SIGTERM")]
    [InlineData(SigInt, 130, "Ctrl-C")]
    public void A_signal_while_benchmarking_stops_removes_the_files_and_exits_with_128_plus_the_signal(int signal, int exitCode, string name)
    {
        using var dir = new TempDirectory();
        // So many rounds that the run cannot end before the signal: only the signal stops it.
        using var tool = ToolProcess.Start("bench", "--quick", "--rounds", "100000", "--no-fio", "--filter", "RandomAccess.Read(1 MiB*", "--dir", dir.Path, "--out", dir.Path);
        Assert.True(tool.WaitUntil(() => Directory.GetFiles(dir.Path, "spindle-bench-*").Length > 0), "the benchmark never created its files: " + tool.Error);

        tool.Signal(signal);
        (int code, string output, string error) = tool.WaitForExit();

        Assert.Equal(exitCode, code);
        Assert.Equal($"spindle bench: cancelled by {name}; temporary files removed", error.Split('\n', StringSplitOptions.RemoveEmptyEntries)[^1]);
        Assert.Empty(Directory.GetFileSystemEntries(dir.Path));
        Assert.Equal("", output);
    }

    [Fact]
    public void A_signal_during_tune_removes_its_file()
    {
        using var dir = new TempDirectory();
        using var tool = ToolProcess.Start("tune", "--size", "64m", "--dir", dir.Path, "--out", dir.Path);
        Assert.True(tool.WaitUntil(() => Directory.GetFiles(dir.Path, "spindle-bench-*").Length > 0), "tune never created its file: " + tool.Error);

        tool.Signal(SigTerm);
        (int code, _, string error) = tool.WaitForExit();

        Assert.Equal(143, code);
        Assert.EndsWith("spindle tune: cancelled by SIGTERM; temporary files removed", error.TrimEnd());
        Assert.Empty(Directory.GetFileSystemEntries(dir.Path));
    }

    [Fact]
    public void Redirected_progress_prints_plain_lines_without_carriage_returns()
    {
        using var dir = new TempDirectory();
        using var tool = ToolProcess.Start("bench", "--quick", "--rounds", "1", "--no-fio", "--filter", "RandomAccess.*", "--dir", dir.Path, "--out", dir.Path);
        var clock = Stopwatch.StartNew();
        (int code, string output, string error) = tool.WaitForExit();
        double seconds = clock.Elapsed.TotalSeconds;

        Assert.True(code == 0, error);
        Assert.DoesNotContain('\r', error);
        Assert.DoesNotContain('\r', output);
        string[] lines = error.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        // 16 rows: a line at each 10 % step (0 % to 90 %) and at most one more per 5 s within a step.
        Assert.Equal("0% row 1 of 16: RandomAccess.Read(1 MiB, 4 KiB)", lines[0]);
        Assert.InRange(lines.Length, 10, 10 + (int)(seconds / ProgressLine.DefaultInterval.TotalSeconds) + 1);
        Assert.All(lines, l => Assert.Matches(@"^\d+% row \d+ of 16: RandomAccess\.", l));
        Assert.Equal(10, lines.Select(l => int.Parse(l[..l.IndexOf('%')]) / 10).Distinct().Count());
    }

    [Fact]
    public void Plain_progress_prints_one_line_per_10_percent_step_and_repeats_no_line()
    {
        var writer = new StringWriter();
        var progress = new ProgressLine(writer, redraw: false, interval: TimeSpan.MaxValue);
        for (int i = 0; i <= 1000; i++)
        {
            progress.Report(i, 1000, $"{i} of 1000");
        }
        progress.Write("done");
        progress.Write("done");
        progress.Clear();

        string[] lines = writer.ToString().Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Equal(["0% 0 of 1000", "10% 100 of 1000", "20% 200 of 1000", "30% 300 of 1000", "40% 400 of 1000", "50% 500 of 1000",
            "60% 600 of 1000", "70% 700 of 1000", "80% 800 of 1000", "90% 900 of 1000", "100% 1000 of 1000", "done"], lines);
        Assert.DoesNotContain('\r', writer.ToString());
    }

    [Fact]
    public void Terminal_progress_redraws_one_line_and_clears_it()
    {
        var writer = new StringWriter();
        var progress = new ProgressLine(writer, redraw: true);
        progress.Report(1, 4, "first");
        progress.Report(2, 4, "second");
        progress.Clear();

        string text = writer.ToString();
        Assert.DoesNotContain('\n', text);
        Assert.Equal(4, text.Count(c => c == '\r'));
        Assert.EndsWith("\r", text);
    }

    [Fact]
    public void Copy_with_redirected_progress_prints_plain_lines()
    {
        using var dir = new TempDirectory();
        byte[] data = new byte[8 * 1024 * 1024];
        new Random(3).NextBytes(data);
        File.WriteAllBytes(dir.File("src.bin"), data);

        using var tool = ToolProcess.Start("copy", dir.File("src.bin"), dir.File("dst.bin"));
        (int code, string output, string error) = tool.WaitForExit();

        Assert.True(code == 0, error);
        Assert.Equal(data, File.ReadAllBytes(dir.File("dst.bin")));
        Assert.DoesNotContain('\r', error);
        Assert.All(error.Split('\n', StringSplitOptions.RemoveEmptyEntries), l => Assert.Matches(@"^\d+% [\d.]+ (B|KiB|MiB) of 8 MiB$", l));
        Assert.StartsWith("copied 8 MiB", output);
    }
}
