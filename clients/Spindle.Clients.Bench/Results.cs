using Spindle;
using System.Globalization;
using System.Text;
using System.Text.Json;

namespace Spindle.Clients.Bench;

/// <summary>What the bench was asked to do. Defaults in one place.</summary>
internal sealed record BenchSettings(bool Quick, int Rounds, string WorkDirectory, string OutDirectory, string? Filter, string? Side)
{
    public static BenchSettings? Parse(string[] args)
    {
        bool quick = false;
        int? rounds = null;
        string work = Path.Combine(Path.GetTempPath(), "spindle-clients-bench");
        string output = Directory.GetCurrentDirectory();
        string? filter = null;
        string? side = null; // one side only ("spindle" or "baseline"), for profiling with strace or perf
        for (int i = 0; i < args.Length; i++)
        {
            switch (args[i])
            {
                case "--quick": quick = true; break;
                case "--rounds" when i + 1 < args.Length && int.TryParse(args[i + 1], CultureInfo.InvariantCulture, out int r) && r > 0: rounds = r; i++; break;
                case "--dir" when i + 1 < args.Length: work = args[++i]; break;
                case "--out" when i + 1 < args.Length: output = args[++i]; break;
                case "--filter" when i + 1 < args.Length: filter = args[++i]; break;
                case "--side" when i + 1 < args.Length && args[i + 1] is "spindle" or "baseline": side = args[++i]; break;
                case "--clients": break; // forwarded by `spindle bench --clients`
                default: return null;
            }
        }
        return new BenchSettings(quick, rounds ?? (quick ? 3 : 5), work, output, filter, side);
    }
}

/// <summary>One run of one side: operations done, the time they took, the process's CPU time (user + system, every thread), and per-operation latencies where measured.</summary>
internal sealed record Measurement(long Operations, double Seconds, double? P99Microseconds, double CpuSeconds)
{
    public double OpsPerSecond => Operations / Seconds;

    public double CpuMicrosecondsPerOperation => CpuSeconds * 1e6 / Operations;
}

/// <summary>A row of the report: medians of both sides and the ratio Spindle / baseline in operations per second.</summary>
internal sealed record RowResult(string Name, string Baseline, Goal Goal, double BaselineOps, double SpindleOps, double? BaselineP99, double? SpindleP99, double BaselineCpu, double SpindleCpu)
{
    public double Ratio => SpindleOps / BaselineOps;

    /// <summary>Whether the row meets its goal: the ratio at least the goal's, and where latency is part of the goal, p99 lower.</summary>
    public bool GoalMet => Goal.IsMetBy(Ratio, BaselineP99, SpindleP99);

    public static RowResult From(Workload workload, List<Measurement> baseline, List<Measurement> spindle)
        => new(workload.Name, workload.Baseline, workload.Goal,
            Median(baseline.Select(m => m.OpsPerSecond)), Median(spindle.Select(m => m.OpsPerSecond)),
            baseline[0].P99Microseconds is null ? null : Median(baseline.Select(m => m.P99Microseconds!.Value)),
            spindle[0].P99Microseconds is null ? null : Median(spindle.Select(m => m.P99Microseconds!.Value)),
            Median(baseline.Select(m => m.CpuMicrosecondsPerOperation)), Median(spindle.Select(m => m.CpuMicrosecondsPerOperation)));

    public string ToConsole() => string.Create(CultureInfo.InvariantCulture,
        $"{Name,-52} {BaselineOps,12:N0} {SpindleOps,12:N0} ops/s  x{Ratio:F2}  cpu/op {BaselineCpu:N1} -> {SpindleCpu:N1} us{(SpindleP99 is null ? "" : $"  p99 {BaselineP99:N0} -> {SpindleP99:N0} us")}");

    private static double Median(IEnumerable<double> values)
    {
        var sorted = values.Order().ToArray();
        return sorted.Length % 2 == 1 ? sorted[sorted.Length / 2] : (sorted[(sorted.Length / 2) - 1] + sorted[sorted.Length / 2]) / 2;
    }
}

/// <summary>Writes clients-report.md and clients-report.json.</summary>
internal static class Report
{
    public static void Write(BenchSettings settings, List<RowResult> rows)
    {
        var md = new StringBuilder();
        md.AppendLine(CultureInfo.InvariantCulture, $"Spindle clients bench ({(settings.Quick ? "quick" : "full")}, {settings.Rounds} interleaved rounds, medians; Spindle engine {SpindleRandomAccess.DefaultEngine}, {Environment.ProcessorCount} cores)");
        md.AppendLine();
        md.AppendLine("Ratio = Spindle ops/s ÷ baseline ops/s: above 1.00 Spindle is faster. CPU = the process's user + system time per operation, every thread.");
        md.AppendLine();
        md.AppendLine("| workload | baseline | baseline ops/s | Spindle ops/s | ratio (Spindle ÷ baseline) | p99 baseline → Spindle (µs) | CPU/op baseline → Spindle (µs) | goal | met |");
        md.AppendLine("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |");
        foreach (RowResult row in rows)
        {
            string p99 = row.SpindleP99 is null ? "" : string.Create(CultureInfo.InvariantCulture, $"{row.BaselineP99:N0} → {row.SpindleP99:N0}");
            md.AppendLine(CultureInfo.InvariantCulture, $"| {row.Name} | {row.Baseline} | {row.BaselineOps:N0} | {row.SpindleOps:N0} | {row.Ratio:F2} | {p99} | {row.BaselineCpu:N1} → {row.SpindleCpu:N1} | {row.Goal} | {(row.GoalMet ? "met" : "not met")} |");
        }
        File.WriteAllText(Path.Combine(settings.OutDirectory, "clients-report.md"), md.ToString());
        File.WriteAllText(Path.Combine(settings.OutDirectory, "clients-report.json"), JsonSerializer.Serialize(new { settings.Quick, settings.Rounds, Engine = SpindleRandomAccess.DefaultEngine.ToString(), Rows = rows }, new JsonSerializerOptions { WriteIndented = true }));
        Console.WriteLine();
        Console.Write(md);
    }
}
