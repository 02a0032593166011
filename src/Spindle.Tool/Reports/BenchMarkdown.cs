using System.Text;
using Spindle.Tool.Bench;

namespace Spindle.Tool.Reports;

/// <summary>
/// <c>bench-report.md</c>: the machine, the main table with Spindle Auto's ratio, CPU and latency per
/// operation beside fio's, the queue-depth sweep, the charts and every performance target met or not.
/// </summary>
public static class BenchMarkdown
{
    /// <summary>
    /// The report as Markdown; <paramref name="chartFile"/> is the ratio chart's file name beside it,
    /// <paramref name="sweepChartFile"/> the sweep chart's (null when no sweep row ran).
    /// </summary>
    public static string Write(BenchReport report, string chartFile, string? sweepChartFile = null)
    {
        var text = new StringBuilder();
        text.AppendLine("# spindle bench");
        text.AppendLine();
        text.AppendLine($"- Date: {report.Date:yyyy-MM-dd HH:mm} UTC, {report.Elapsed.TotalSeconds:0} s{(report.Quick ? ", `--quick` (large files shrunk)" : "")}");
        text.AppendLine($"- Machine: {report.Machine}");
        text.AppendLine($"- Files in: `{report.Directory}`");
        text.AppendLine($"- Spindle engines: {report.Engines}");
        text.AppendLine($"- Harness: a warm-up until each contender's time settles and its tier-1 code is compiled (the tool runs with the runtime's tier-1 promotion delay at 0), then {report.Settings.Rounds} rounds per contender (at least 7 where a single call is long, to keep the time budget), System.IO and Spindle interleaved; "
            + $"rows whose verdict was still open got up to {report.Settings.MaxRounds} paired rounds of System.IO and Auto; fio: {report.FioVersion ?? FioRunner.NotInstalled}");
        foreach (string note in report.Notes)
        {
            text.AppendLine($"- **Note:** {note}");
        }
        text.AppendLine();
        var summary = new BenchSummary(report.Rows);
        text.AppendLine("## Verdict");
        text.AppendLine();
        text.AppendLine($"**{summary.Headline()}.**");
        text.AppendLine();
        text.AppendLine("Each row's ratio is the median over the rounds of Auto's time / System.IO's time in the same round; the interval is a 95 % confidence interval for that median "
            + $"(order statistics of the rounds). **faster**: the whole interval is below {1 - RatioEstimate.TieBand:0.00}; **slower**: the whole interval is above {1 + RatioEstimate.TieBand:0.00}; "
            + "**equal**: the interval reaches into that band, so this run cannot tell them apart. Each time has ± the half-width of its own 95 % interval over the rounds. "
            + "The performance targets are a separate section below.");
        text.AppendLine();
        text.AppendLine("## Results");
        text.AppendLine();
        text.AppendLine("Times are the median per operation (one operation = one invocation of the row: the whole file for transfer rows, one read for the random-read rows, one block for the sequential rows). "
            + $"**{BenchTable.RatioTitle}** is Spindle with its defaults (engine `Auto`, what a user gets without configuring anything) against System.IO; below 1.00 Spindle is faster. "
            + "The Sync, ThreadPool and IoUring columns name an engine explicitly, for comparison.");
        if (report.Rows.Count > 0)
        {
            text.AppendLine();
            text.Append(BenchTable.Build(report.Rows).ToMarkdown());
            text.AppendLine();
            text.AppendLine($"![Spindle Auto / System.IO per row]({chartFile})");
        }
        TextTable cpu = BenchTable.CpuAndLatency(report.Rows);
        if (cpu.Count > 0)
        {
            text.AppendLine();
            text.AppendLine("## CPU, context switches and io_uring_enter calls per operation");
            text.AppendLine();
            text.AppendLine("CPU/op is the process's user + system CPU time (every thread: callers, the ring thread, pool threads, GC) over the measured batches divided by their operations, median over the rounds; "
                + "fio's is (usr_cpu + sys_cpu) × its runtime / its I/Os. "
                + "Switches/op is the process's context switches (`getrusage`: voluntary + involuntary, every thread) per operation, median over the rounds: each hand-off of a completion to a sleeping thread costs one or more; "
                + "fio's is its job's `ctx` / its I/Os. Enters/op is `io_uring_enter` calls per operation: Spindle's from its meter (`spindle.io_uring.enters`), fio's counted by `perf stat` on the syscall tracepoint around each fio run; System.IO makes none. "
                + "p50, p99 and worst are over every operation of every measured round, from the call to the resumed await; fio's are the same for each of its I/Os (`lat_ns`: submission and completion).");
            text.AppendLine();
            text.Append(cpu.ToMarkdown());
        }
        if (BenchTable.SweepRows(report.Rows).Count > 0)
        {
            text.AppendLine();
            text.AppendLine("## Queue-depth sweep");
            text.AppendLine();
            text.AppendLine("O_DIRECT 4 KiB random reads, System.IO's `RandomAccess.ReadAsync` and Spindle's default against fio's io_uring engine at the same depth.");
            text.AppendLine();
            text.Append(BenchTable.Sweep(report.Rows).ToMarkdown());
            if (sweepChartFile is not null)
            {
                text.AppendLine();
                text.AppendLine($"![operations per second against reads in flight]({sweepChartFile})");
            }
        }
        DispatchReport.AppendMarkdown(report.Dispatch, text);
        text.AppendLine();
        text.AppendLine("## Performance targets");
        text.AppendLine();
        text.AppendLine($"Spindle's own goals against System.IO and fio, checked on Spindle Auto's medians (for people who track them; the verdict above does not depend on them): {summary.TargetsLine().Replace(" (the \"Performance targets\" section of bench-report.md)", "")}.");
        text.AppendLine();
        text.Append(TargetsTable(report.Rows).ToMarkdown());
        return text.ToString();
    }

    /// <summary>Every target of every row, met or not, with the measured value.</summary>
    public static TextTable TargetsTable(IReadOnlyList<RowResult> rows)
    {
        var table = new TextTable(["Row", "Target", "Met", "Measured"], [false, false, false, false]);
        foreach (RowResult row in rows)
        {
            foreach (TargetCheck check in SpecTargets.Evaluate(row))
            {
                table.Add(row.Name, check.Target, check.Met switch { true => "met", false => "**not met**", null => "unknown" }, check.Detail);
            }
        }
        return table;
    }
}
