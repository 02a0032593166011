using System.Xml.Linq;
using Spindle.Tool.Bench;

namespace Spindle.Tool.Reports;

/// <summary>Where a finished <c>spindle bench</c> run goes: its tables on the console, its four report files on disk.</summary>
public static class BenchOutput
{
    /// <summary>The headline verdict, the main table, then the CPU and latency table and the sweep table when their rows ran.</summary>
    public static void WriteTables(BenchReport report, TextWriter writer)
    {
        foreach (string note in report.Notes)
        {
            writer.WriteLine("note: " + note);
        }
        if (report.Rows.Count > 0)
        {
            writer.WriteLine(new BenchSummary(report.Rows).Headline());
            writer.WriteLine();
            writer.Write(BenchTable.Build(report.Rows).ToConsole());
        }
        TextTable cpu = BenchTable.CpuAndLatency(report.Rows);
        if (cpu.Count > 0)
        {
            writer.WriteLine();
            writer.WriteLine(BenchTable.CpuAndLatencyTitle);
            writer.Write(cpu.ToConsole());
        }
        if (BenchTable.SweepRows(report.Rows).Count > 0)
        {
            writer.WriteLine();
            writer.WriteLine("Queue-depth sweep (O_DIRECT 4 KiB random reads)");
            writer.Write(BenchTable.Sweep(report.Rows).ToConsole());
        }
        DispatchReport.WriteTables(report.Dispatch, writer);
    }

    /// <summary>
    /// Writes bench-report.md, bench-report.json, bench-report.svg and, when sweep rows ran,
    /// bench-sweep.svg into <paramref name="directory"/>; returns their paths.
    /// </summary>
    public static IReadOnlyList<string> WriteFiles(BenchReport report, string directory)
    {
        const string RatioChartFile = "bench-report.svg", SweepChartFile = "bench-sweep.svg";
        XDocument? sweepChart = SweepChart.Build(report.Rows, $"spindle bench: queue-depth sweep, {report.Date:yyyy-MM-dd}");
        string markdown = Path.Combine(directory, "bench-report.md");
        string json = Path.Combine(directory, "bench-report.json");
        string ratios = Path.Combine(directory, RatioChartFile);
        File.WriteAllText(markdown, BenchMarkdown.Write(report, RatioChartFile, sweepChart is null ? null : SweepChartFile));
        File.WriteAllText(json, BenchJson.Write(report));
        SvgFile.Save(RatioChart.Build(report.Rows, ChartTitle(report), report.Engines), ratios);
        if (sweepChart is null)
        {
            return [markdown, json, ratios];
        }
        string sweep = Path.Combine(directory, SweepChartFile);
        SvgFile.Save(sweepChart, sweep);
        return [markdown, json, ratios, sweep];
    }

    /// <summary>The ratio chart's title: the date, and whether the run was <c>--quick</c>.</summary>
    public static string ChartTitle(BenchReport report) =>
        $"spindle bench, {report.Date:yyyy-MM-dd HH:mm} UTC" + (report.Quick ? " — --quick run (shrunk files, fewer rounds)" : "");
}
