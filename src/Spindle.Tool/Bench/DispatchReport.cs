using System.Globalization;
using System.Text;
using System.Text.Json.Nodes;
using Spindle.Tool.Reports;
using Spindle.Workloads;

namespace Spindle.Tool.Bench;

/// <summary>The dispatch section of the console output, bench-report.md and bench-report.json.</summary>
public static class DispatchReport
{
    private const string Dash = "—";

    /// <summary>One line on how the cells were measured.</summary>
    public static string Method(DispatchMatrixResult matrix) => string.Create(CultureInfo.InvariantCulture,
        $"4 KiB random reads, N callers each looping {{ await read; spin C µs of CPU }}; warm-up passes of {matrix.Settings.WarmupTime.TotalSeconds:0.###} s per contender, "
        + $"at least 32 and until two in a row compiled no method (tier-1 code on both sides), then {matrix.Settings.Rounds} rounds of {matrix.Settings.RoundTime.TotalSeconds:0.##} s per contender, "
        + $"System.IO, Auto and (C = 0) fio io_uring and psync interleaved, medians; spin calibrated at {matrix.SpinIterationsPerMicrosecond:0.#} iterations/µs "
        + $"(a 100 µs spin took {matrix.SpinCheckNs / 1000:0.#} µs of thread CPU); 1core cells run in a child process pinned to one CPU");

    /// <summary>Operations per second, ratio, spread, the limit and the targets met per cell.</summary>
    public static TextTable Throughput(DispatchMatrixResult matrix)
    {
        var table = new TextTable(["Cell", "System.IO ops/s", "Auto ops/s", "Auto / System.IO", "Spread S.IO / Auto", "Limit ops/s", "Auto % of limit", "Targets"],
            [false, true, true, true, true, true, true, false]);
        foreach (DispatchCellResult cell in matrix.Cells)
        {
            if (cell.Skipped is not null || cell.SystemIO is not { } systemIO || cell.Auto is not { } auto)
            {
                table.Add(cell.Cell.Name, Dash, Dash, Dash, Dash, Dash, Dash, "skipped: " + cell.Skipped);
                continue;
            }
            IReadOnlyList<TargetCheck> checks = DispatchTargets.Evaluate(cell, matrix.PartnerOf(cell));
            table.Add(cell.Cell.Name, Rate(systemIO.OperationsPerSecond), Rate(auto.OperationsPerSecond),
                cell.FirstPassRatio is double first ? $"{Fixed(cell.Ratio)} (first {Fixed(first)}, then {auto.Rounds} rounds)" : Fixed(cell.Ratio),
                $"{Percent(systemIO.Spread)} / {Percent(auto.Spread)}",
                cell.Limit is { } limit ? $"{Rate(limit.Iops)} ({cell.LimitEngine})" : cell.Cell.SpinMicroseconds == 0 ? cell.FioNote : Dash,
                double.IsFinite(cell.ShareOfLimit) ? Percent(cell.ShareOfLimit) : Dash,
                Summary(checks));
        }
        return table;
    }

    /// <summary>CPU per read, p50 and p99 read latency and the worst single wait per cell, System.IO beside Auto (and the limit's CPU).</summary>
    public static TextTable CpuAndLatency(DispatchMatrixResult matrix)
    {
        var table = new TextTable(["Cell", "CPU/op S.IO", "CPU/op Auto", "CPU/op limit", "p50 S.IO", "p50 Auto", "p99 S.IO", "p99 Auto", "Worst S.IO", "Worst Auto",
                "Warm-up passes / methods compiled in rounds"],
            [false, true, true, true, true, true, true, true, true, true, true]);
        foreach (DispatchCellResult cell in matrix.Cells)
        {
            if (cell.SystemIO is not { } s || cell.Auto is not { } a)
            {
                continue;
            }
            table.Add(cell.Cell.Name, Units.Nanoseconds(s.CpuNsPerOperation), Units.Nanoseconds(a.CpuNsPerOperation),
                cell.Limit is { } limit ? Units.Nanoseconds(limit.CpuNsPerOperation) : Dash,
                Units.Nanoseconds(s.P50Ns), Units.Nanoseconds(a.P50Ns), Units.Nanoseconds(s.P99Ns), Units.Nanoseconds(a.P99Ns),
                Units.Nanoseconds(s.WorstWaitNs), Units.Nanoseconds(a.WorstWaitNs), $"{cell.WarmupPasses} / {cell.MethodsCompiledInRounds}");
        }
        return table;
    }

    /// <summary>Every target of every cell, met or not, with the measured value.</summary>
    public static TextTable Targets(DispatchMatrixResult matrix)
    {
        var table = new TextTable(["Cell", "Target", "Met", "Measured"], [false, false, false, false]);
        foreach ((DispatchCellResult cell, TargetCheck check) in DispatchTargets.All(matrix))
        {
            table.Add(cell.Cell.Name, check.Target, check.Met switch { true => "met", false => "**not met**", null => "unknown" }, check.Detail);
        }
        return table;
    }

    /// <summary>Targets not met over the whole section.</summary>
    public static int Missed(DispatchMatrixResult? matrix) => matrix is null ? 0 : DispatchTargets.All(matrix).Count(c => c.Check.Met == false);

    /// <summary>The section on the console.</summary>
    public static void WriteTables(DispatchMatrixResult? matrix, TextWriter writer)
    {
        if (matrix is null)
        {
            return;
        }
        writer.WriteLine();
        writer.WriteLine("Dispatch matrix: " + Method(matrix));
        writer.Write(Throughput(matrix).ToConsole());
        TextTable details = CpuAndLatency(matrix);
        if (details.Count > 0)
        {
            writer.WriteLine();
            writer.WriteLine("Dispatch matrix: CPU per read (process user + system), read latency (call to resumed continuation), worst single wait");
            writer.Write(details.ToConsole());
        }
        IEnumerable<string> missed = DispatchTargets.All(matrix).Where(c => c.Check.Met == false).Select(c => $"  {c.Cell.Cell.Name}: {c.Check.Target}: {c.Check.Detail}");
        writer.WriteLine();
        writer.WriteLine($"Dispatch targets not met: {Missed(matrix)}");
        foreach (string line in missed)
        {
            writer.WriteLine(line);
        }
    }

    /// <summary>The section of bench-report.md.</summary>
    public static void AppendMarkdown(DispatchMatrixResult? matrix, StringBuilder text)
    {
        if (matrix is null)
        {
            return;
        }
        text.AppendLine();
        text.AppendLine("## Dispatch matrix");
        text.AppendLine();
        text.AppendLine(Method(matrix) + ". The limit is the better of fio's io_uring (one job, iodepth = callers) and psync (one job per caller) at the same depth. "
            + "Spread is (fastest − slowest round) / median. Latency is from the call to the resumed continuation; the worst wait is the longest single read of every round.");
        text.AppendLine();
        text.Append(Throughput(matrix).ToMarkdown());
        text.AppendLine();
        text.Append(CpuAndLatency(matrix).ToMarkdown());
        text.AppendLine();
        text.AppendLine("### Dispatch targets (Spindle Auto)");
        text.AppendLine();
        text.Append(Targets(matrix).ToMarkdown());
    }

    /// <summary>The section of bench-report.json, or null when it did not run.</summary>
    public static JsonNode? Json(DispatchMatrixResult? matrix)
    {
        if (matrix is null)
        {
            return null;
        }
        var cells = new JsonArray();
        foreach (DispatchCellResult cell in matrix.Cells)
        {
            var results = new JsonObject();
            foreach (DispatchContenderResult r in cell.Results)
            {
                results[r.Contender.Title()] = new JsonObject
                {
                    ["operationsPerSecond"] = Number(r.OperationsPerSecond),
                    ["minOperationsPerSecond"] = Number(r.MinOperationsPerSecond),
                    ["maxOperationsPerSecond"] = Number(r.MaxOperationsPerSecond),
                    ["cpuNsPerOperation"] = Number(r.CpuNsPerOperation),
                    ["p50Ns"] = Number(r.P50Ns),
                    ["p99Ns"] = Number(r.P99Ns),
                    ["worstWaitNs"] = Number(r.WorstWaitNs),
                    ["rounds"] = r.Rounds,
                };
            }
            var targets = new JsonArray();
            foreach (TargetCheck check in DispatchTargets.Evaluate(cell, matrix.PartnerOf(cell)))
            {
                targets.Add(new JsonObject { ["target"] = check.Target, ["met"] = check.Met, ["measured"] = check.Detail });
            }
            cells.Add(new JsonObject
            {
                ["name"] = cell.Cell.Name,
                ["storage"] = DispatchCell.StorageName(cell.Cell.Storage),
                ["inFlight"] = cell.Cell.InFlight,
                ["spinMicroseconds"] = cell.Cell.SpinMicroseconds,
                ["cores"] = cell.Cell.OneCore ? "1" : "all",
                ["processors"] = cell.Processors,
                ["storageDetail"] = cell.Storage,
                ["skipped"] = cell.Skipped,
                ["results"] = results,
                ["autoRatio"] = Number(cell.Ratio),
                ["firstPassAutoRatio"] = cell.FirstPassRatio is double first ? Number(first) : null,
                ["fioIoUring"] = Fio(cell.FioIoUring),
                ["fioPsync"] = Fio(cell.FioPsync),
                ["limitEngine"] = cell.LimitEngine,
                ["autoShareOfLimit"] = Number(cell.ShareOfLimit),
                ["fioNote"] = cell.FioNote,
                ["warmupPasses"] = cell.WarmupPasses,
                ["methodsCompiledInRounds"] = cell.MethodsCompiledInRounds,
                ["targets"] = targets,
            });
        }
        return new JsonObject
        {
            ["rounds"] = matrix.Settings.Rounds,
            ["roundMs"] = matrix.Settings.RoundTime.TotalMilliseconds,
            ["warmupMs"] = matrix.Settings.WarmupTime.TotalMilliseconds,
            ["fileBytes"] = matrix.Settings.FileSize,
            ["spinIterationsPerMicrosecond"] = Number(matrix.SpinIterationsPerMicrosecond),
            ["spinCheckNs"] = Number(matrix.SpinCheckNs),
            ["cells"] = cells,
        };
    }

    private static JsonObject? Fio(FioResult? fio) => fio is null ? null : new JsonObject
    {
        ["command"] = fio.Command,
        ["iops"] = Number(fio.Iops),
        ["cpuNsPerOperation"] = Number(fio.CpuNsPerOperation),
        ["p50Ns"] = Number(fio.P50Ns),
        ["p99Ns"] = Number(fio.P99Ns),
    };

    private static string Summary(IReadOnlyList<TargetCheck> checks)
    {
        int met = checks.Count(c => c.Met == true);
        string[] missed = [.. checks.Where(c => c.Met == false).Select(c => c.Target)];
        return missed.Length == 0 ? $"{met}/{checks.Count} met" : $"{met}/{checks.Count} met; not: {string.Join("; ", missed)}";
    }

    private static string Rate(double value) => double.IsFinite(value) ? value.ToString("N0", CultureInfo.InvariantCulture) : Dash;

    private static string Fixed(double value) => double.IsFinite(value) ? value.ToString("0.00", CultureInfo.InvariantCulture) : Dash;

    private static string Percent(double fraction) => double.IsFinite(fraction) ? (fraction * 100).ToString("0", CultureInfo.InvariantCulture) + " %" : Dash;

    private static JsonNode? Number(double value) => double.IsFinite(value) ? JsonValue.Create(Math.Round(value, 3)) : null;
}
