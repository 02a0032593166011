using System.Globalization;
using System.Text;
using Spindle.Tool.Bench;
using Spindle.Tool.Cli;
using Spindle.Workloads;

namespace Spindle.Tool.Reports;

/// <summary>
/// The README's opening figures, written by the benchmark itself (<c>spindle bench --readme README.md</c>): a short table
/// of the headline O_DIRECT rows, Spindle Auto beside System.IO and fio, between the markers <see cref="Begin"/> and
/// <see cref="End"/>, so that what the README says is what the tool last measured. The rest of the file is left byte for byte.
/// </summary>
public static class ReadmeHeadline
{
    /// <summary>The line that opens the block.</summary>
    public const string Begin = "<!-- bench:headline -->";

    /// <summary>The line that closes the block.</summary>
    public const string End = "<!-- /bench:headline -->";

    // The headline rows in the order the table shows them: a prefix of the row's name and what the README calls it.
    private static readonly (string Prefix, string Title)[] s_rows =
    [
        ("RandomRead4K.Direct(QD 1,", "4 KiB random `ReadAsync`, 1 in flight"),
        ("RandomRead4K.Direct(QD 8,", "4 KiB random `ReadAsync`, 8 in flight"),
        ("RandomRead4K.Direct(QD 32,", "4 KiB random `ReadAsync`, 32 in flight"),
        ("RandomRead4K.Direct(QD 128,", "4 KiB random `ReadAsync`, 128 in flight"),
        ("ReadsAtOnce4K.Direct(", "64 × 4 KiB `ReadAsync` started at once"),
        ("BatchRead4K.Direct(32 ", "`ReadBatchAsync`, 32 × 4 KiB per batch"),
        ("SyncOverAsync4K.Direct(", "sync-over-async: 64 pool threads each waiting for its reads (fio: `psync`, a thread each)"),
        ("SequentialRead.Direct(", "1 MiB sequential reads, 8 in flight"),
    ];

    /// <summary>The headline rows of <paramref name="rows"/> that ran (quiet runs only), in table order, with their titles.</summary>
    public static IReadOnlyList<(string Title, RowResult Row)> Rows(IReadOnlyList<RowResult> rows) =>
        s_rows.SelectMany(h => rows.Where(r => r.Skipped is null && r.BusyNeighbours == 0 && r.Name.StartsWith(h.Prefix, StringComparison.Ordinal))
            .Take(1).Select(r => (h.Title, r))).ToList();

    /// <summary>
    /// The block, markers included: the table, then one line saying which command measured it, when, on what, and where the
    /// full report is. <paramref name="command"/> is the command as a reader would type it again.
    /// </summary>
    public static string Block(BenchReport report, string command)
    {
        var table = new TextTable(
            ["O_DIRECT reads", "ops/s: System.IO / Auto / fio", "CPU µs per op: System.IO / Auto / fio", "context switches per op: System.IO / Auto / fio", "io_uring_enter per op: Auto / fio"],
            [false, true, true, true, true]);
        foreach ((string title, RowResult row) in Rows(report.Rows))
        {
            ContenderResult? s = row.SystemIO, a = row.Auto;
            FioResult? f = row.Fio is { } fio && fio.Command.StartsWith("fio", StringComparison.Ordinal) ? fio : null;
            table.Add(title,
                Three(Rate(s?.OperationsPerSecond), Rate(a?.OperationsPerSecond), row.HasFioJob ? Rate(f?.Iops) : null),
                Three(Micro(s?.CpuNsPerOperation), Micro(a?.CpuNsPerOperation), row.HasFioJob ? Micro(f?.CpuNsPerOperation) : null),
                Three(Count(s?.ContextSwitchesPerOperation), Count(a?.ContextSwitchesPerOperation), row.HasFioJob ? Count(f?.ContextSwitchesPerOperation) : null),
                Count(a?.RingEntersPerOperation) + (row.HasFioJob ? " / " + Count(f?.RingEntersPerOperation) : ""));
        }
        var text = new StringBuilder();
        text.Append(Begin).Append('\n');
        text.Append(table.ToMarkdown().ReplaceLineEndings("\n"));
        text.Append('\n');
        text.Append(string.Create(CultureInfo.InvariantCulture, $"Written by `{command}` on {report.Date:yyyy-MM-dd HH:mm} UTC: {report.Machine.Processors} × {report.Machine.CpuModel}, "));
        text.Append($"Linux {report.Machine.Kernel}, load average {report.Machine.LoadAverage} at the start; medians of interleaved rounds (System.IO, Spindle and fio take turns); ");
        text.Append(report.FioVersion ?? "fio not installed");
        text.Append(". Every figure is per operation, for the whole process (every thread). The full report, with each ratio's interval and the targets: `bench-report.md`, written beside it.");
        text.Append('\n');
        foreach (string note in report.Notes)
        {
            text.Append('\n').Append("Note: ").Append(note).Append('\n');
        }
        text.Append(End);
        return text.ToString();
    }

    /// <summary>
    /// <paramref name="readme"/> with its block (from <see cref="Begin"/> to the end of <see cref="End"/>) replaced by
    /// <paramref name="block"/>; every other byte stays as it was.
    /// </summary>
    /// <exception cref="ToolException">The text has no block, or its end marker comes before its start.</exception>
    public static string Rewrite(string readme, string block)
    {
        int begin = readme.IndexOf(Begin, StringComparison.Ordinal);
        int end = begin < 0 ? -1 : readme.IndexOf(End, begin, StringComparison.Ordinal);
        if (begin < 0 || end < 0)
        {
            throw new ToolException($"the README has no block to fill: put a line {Begin} and a line {End} where the figures go");
        }
        return string.Concat(readme.AsSpan(0, begin), block, readme.AsSpan(end + End.Length));
    }

    /// <summary>Rewrites the block of the file at <paramref name="path"/> with this run's figures.</summary>
    public static void WriteInto(string path, BenchReport report, string command)
    {
        if (!File.Exists(path))
        {
            throw new ToolException($"--readme {path}: no such file");
        }
        File.WriteAllText(path, Rewrite(File.ReadAllText(path), Block(report, command)), new UTF8Encoding(encoderShouldEmitUTF8Identifier: false));
    }

    private static string Three(string systemIO, string auto, string? fio) => fio is null ? $"{systemIO} / {auto}" : $"{systemIO} / {auto} / {fio}";

    private static string Rate(double? perSecond) => perSecond is { } v && double.IsFinite(v) ? v.ToString("N0", CultureInfo.InvariantCulture) : "—";

    private static string Micro(double? ns) => ns is { } v && double.IsFinite(v) ? (v / 1000).ToString("0.0", CultureInfo.InvariantCulture) : "—";

    private static string Count(double? count) => count is { } v && double.IsFinite(v) ? BenchTable.PerOperation(v) : "—";
}
