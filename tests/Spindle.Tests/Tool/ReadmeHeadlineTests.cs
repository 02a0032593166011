using System.Diagnostics;
using System.Text.Json;
using Spindle.Tests.Infrastructure;
using Spindle.Tool.Bench;
using Spindle.Tool.Cli;
using Spindle.Tool.Reports;
using Spindle.Workloads;

namespace Spindle.Tests.Tool;

/// <summary>The README's headline block, written by the benchmark; and what the reports say without fio.</summary>
public class ReadmeHeadlineTests
{
    private static readonly MachineInfo Machine = new(2, "Test CPU", "6.1", 1L << 30, "ext4 (test)", ".NET test", 32768, "1.00 2.00 3.00");

    private static ContenderResult Result(Contender contender, double ns, double cpu, double switches, double enters) =>
        new(contender, ns, ns, ns, 0, 5, 1) { CpuNsPerOperation = cpu, ContextSwitchesPerOperation = switches, RingEntersPerOperation = enters };

    private static BenchReport Report(IReadOnlyList<RowResult> rows, IReadOnlyList<string>? notes = null) => new()
    {
        Date = new DateTimeOffset(2026, 11, 28, 5, 0, 0, TimeSpan.Zero),
        Machine = Machine,
        Quick = true,
        Settings = HarnessSettings.Quick,
        Directory = ".",
        FioVersion = "fio-3.33",
        Rows = rows,
        Notes = notes ?? [],
    };

    private static RowResult Row(string name, FioResult? fio, bool hasFioJob, params ContenderResult[] results) => new()
    {
        Name = name,
        Group = "Beyond",
        IsAsync = true,
        OperationsPerInvocation = 1,
        Results = results,
        Fio = fio,
        HasFioJob = hasFioJob,
    };

    [Fact]
    public void The_block_has_a_line_per_headline_row_with_ops_cpu_switches_and_enters_beside_System_IO_and_fio()
    {
        var fio = new FioResult("fio --name=spindle …", 40_000, 40_000 * 4096.0) { CpuNsPerOperation = 7_500, ContextSwitchesPerOperation = 0.12, RingEntersPerOperation = 1.08 };
        RowResult qd8 = Row("RandomRead4K.Direct(QD 8, 1 GiB)", fio, true,
            Result(Contender.SystemIO, 50_000, 12_500, 1.0, 0), Result(Contender.SpindleAuto, 40_000, 26_100, 9.8, 0.99));
        RowResult syncOverAsync = Row("SyncOverAsync4K.Direct(64 pool threads, 1 GiB)", null, false,
            Result(Contender.SystemIO, 100_000, 60_000, 7.9, 0), Result(Contender.SpindleAuto, 50_000, 40_000, 8.0, 0.71));
        RowResult notHeadline = Row("RandomAccess.Read(1 MiB, 4 KiB)", null, false, Result(Contender.SystemIO, 1, 1, 0, 0), Result(Contender.SpindleAuto, 1, 1, 0, 0));
        RowResult busyTwin = qd8.AsBusyTwin("RandomRead4K.Direct(QD 8, 1 GiB) [busy 2]", qd8, 2);

        string block = ReadmeHeadline.Block(Report([notHeadline, syncOverAsync, qd8, busyTwin]), "spindle bench --quick");
        string[] lines = block.Split('\n');

        Assert.Equal(ReadmeHeadline.Begin, lines[0]);
        Assert.Equal(ReadmeHeadline.End, lines[^1]);
        Assert.StartsWith("| O_DIRECT reads | ops/s: System.IO / Auto / fio | CPU µs per op: System.IO / Auto / fio | context switches per op: System.IO / Auto / fio | io_uring_enter per op: Auto / fio |", lines[1]);
        // In the README's order (depth before sync-over-async), quiet rows only, fio's figures where the row has a job.
        Assert.Equal("| 4 KiB random `ReadAsync`, 8 in flight | 20,000 / 25,000 / 40,000 | 12.5 / 26.1 / 7.5 | 1.00 / 9.80 / 0.12 | 0.99 / 1.08 |", lines[3]);
        Assert.Equal("| sync-over-async: 64 pool threads each waiting for its reads (fio: `psync`, a thread each) | 10,000 / 20,000 | 60.0 / 40.0 | 7.90 / 8.00 | 0.71 |", lines[4]);
        Assert.Equal("", lines[5]);
        Assert.StartsWith("Written by `spindle bench --quick` on 2026-11-28 05:00 UTC: 2 × Test CPU, Linux 6.1, load average 1.00 2.00 3.00 at the start", lines[6]);
        Assert.DoesNotContain("RandomAccess.Read", block);
        Assert.DoesNotContain("busy", block);
    }

    [Fact]
    public void Rewriting_the_block_leaves_every_other_byte_of_the_file_as_it_was()
    {
        // Windows line endings, non-ASCII text and no final newline outside the block: none of it may change.
        string before = "# Title\r\n\r\nSome text — with “quotes”.\r\n\r\n";
        string after = "\r\n\r\n## Install\r\n\ntrailing text without a newline";
        string readme = before + ReadmeHeadline.Begin + "\nold table\nold line\n" + ReadmeHeadline.End + after;
        string block = ReadmeHeadline.Begin + "\n| new |\n" + ReadmeHeadline.End;

        string rewritten = ReadmeHeadline.Rewrite(readme, block);

        Assert.Equal(before + block + after, rewritten);
        Assert.Equal(rewritten, ReadmeHeadline.Rewrite(rewritten, block));   // a second run changes nothing
    }

    [Fact]
    public void Writing_into_a_file_keeps_its_bytes_outside_the_block()
    {
        using var dir = new TempDirectory();
        string path = dir.File("README.md");
        byte[] head = "# Spindle\n\n```sh\ndotnet run … bench --quick\n```\n\n"u8.ToArray(), tail = "\n\n## Install\n\nÜber alles.\n"u8.ToArray();
        File.WriteAllBytes(path, [.. head, .. System.Text.Encoding.UTF8.GetBytes(ReadmeHeadline.Begin + "\n" + ReadmeHeadline.End), .. tail]);

        ReadmeHeadline.WriteInto(path, Report([]), "spindle bench --quick");

        byte[] written = File.ReadAllBytes(path);
        Assert.Equal(head, written[..head.Length]);
        Assert.Equal(tail, written[^tail.Length..]);
        Assert.Contains("Written by `spindle bench --quick`", File.ReadAllText(path));
    }

    [Fact]
    public void A_readme_without_the_markers_is_refused_with_how_to_add_them()
    {
        ToolException e = Assert.Throws<ToolException>(() => ReadmeHeadline.Rewrite("# Spindle\n\nno block here\n", "x"));
        Assert.Contains(ReadmeHeadline.Begin, e.Message);
        Assert.Contains(ReadmeHeadline.End, e.Message);
        // An end marker before the start is no block either.
        Assert.Throws<ToolException>(() => ReadmeHeadline.Rewrite(ReadmeHeadline.End + "\n" + ReadmeHeadline.Begin + "\n", "x"));
    }

    [Fact]
    public void Without_fio_on_the_path_the_report_says_how_to_install_it()
    {
        // The tool in a process of its own whose PATH has no fio (an empty directory), on one row with a fio job.
        using var dir = new TempDirectory();
        string empty = Directory.CreateDirectory(dir.File("bin")).FullName;
        string host = Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") ?? ProgramPath.Find("dotnet") ?? throw new InvalidOperationException("no dotnet host");
        var start = new ProcessStartInfo(host) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        start.Environment["PATH"] = empty;
        foreach (string arg in new[] { Path.Combine(AppContext.BaseDirectory, "Spindle.Tool.dll"), "bench", "--quick", "--rounds", "2",
                     "--filter", "RandomRead4K.Cached(QD 8*", "--dir", dir.Path, "--out", dir.Path })
        {
            start.ArgumentList.Add(arg);
        }
        using Process tool = Process.Start(start)!;
        Task<string> errors = tool.StandardError.ReadToEndAsync();
        string printed = tool.StandardOutput.ReadToEnd();
        tool.WaitForExit();

        Assert.True(tool.ExitCode == 0, errors.Result);
        Assert.Contains("note: " + FioRunner.InstallHint, printed);
        Assert.Contains(FioRunner.NotInstalled, printed);   // the fio cells say why they are empty, and how to fill them
        Assert.Contains("apt-get install fio", FioRunner.NotInstalled);
        Assert.Contains("- **Note:** " + FioRunner.InstallHint, File.ReadAllText(dir.File("bench-report.md")));
        using JsonDocument json = JsonDocument.Parse(File.ReadAllText(dir.File("bench-report.json")));
        Assert.Equal([FioRunner.InstallHint], json.RootElement.GetProperty("notes").EnumerateArray().Select(n => n.GetString()));
        Assert.Equal(JsonValueKind.Null, json.RootElement.GetProperty("fio").ValueKind);
    }
}
