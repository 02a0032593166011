using System.Text;
using Spindle.Tool.Bench;

namespace Spindle.Tool.Reports;

/// <summary><c>bench-report.md</c>: the machine, the table, the chart and the SPEC §6 targets each row misses.</summary>
public static class BenchMarkdown
{
    /// <summary>The report as Markdown; <paramref name="chartFile"/> is the SVG's file name beside it.</summary>
    public static string Write(BenchReport report, string chartFile)
    {
        var text = new StringBuilder();
        text.AppendLine("# spindle bench");
        text.AppendLine();
        text.AppendLine($"- Date: {report.Date:yyyy-MM-dd HH:mm} UTC, {report.Elapsed.TotalSeconds:0} s{(report.Quick ? ", `--quick` (large files shrunk)" : "")}");
        text.AppendLine($"- Machine: {report.Machine}");
        text.AppendLine($"- Files in: `{report.Directory}`");
        text.AppendLine($"- Spindle engines: {report.Engines}");
        text.AppendLine($"- Harness: {report.Settings.Rounds} rounds per contender, System.IO and Spindle interleaved, median time per operation; fio: {report.FioVersion ?? FioRunner.NotInstalled}");
        text.AppendLine();
        text.AppendLine("Times are the median per operation (one operation = one invocation of the row: the whole file for transfer rows, one read for the random-read rows, one block for the sequential rows). Ratio = best Spindle engine / System.IO; below 1.00 Spindle is faster.");
        text.AppendLine();
        text.Append(BenchTable.Build(report.Rows).ToMarkdown());
        text.AppendLine();
        text.AppendLine($"![ratios]({chartFile})");
        text.AppendLine();
        text.AppendLine("## SPEC §6 targets");
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
