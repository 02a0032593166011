using System.Text.Json;
using System.Text.Json.Nodes;
using Spindle.Workloads;
using Spindle.Tool.Bench;

namespace Spindle.Tool.Reports;

/// <summary><c>bench-report.json</c>: every figure of a run, for scripts and for comparing runs.</summary>
public static class BenchJson
{
    /// <summary>The report as indented JSON. Missing figures are null.</summary>
    public static string Write(BenchReport report)
    {
        var rows = new JsonArray();
        foreach (RowResult row in report.Rows)
        {
            var results = new JsonObject();
            foreach (ContenderResult result in row.Results)
            {
                results[result.Contender.Title()] = new JsonObject
                {
                    ["medianNs"] = Number(result.MedianNs),
                    ["minNs"] = Number(result.MinNs),
                    ["maxNs"] = Number(result.MaxNs),
                    ["allocatedBytesPerOperation"] = Number(result.AllocatedBytesPerOperation),
                    ["allocatedBytesPerCall"] = Number(row.AllocatedPerCall(result)),
                    ["cpuNsPerOperation"] = Number(result.CpuNsPerOperation),
                    ["contextSwitchesPerOperation"] = Number(result.ContextSwitchesPerOperation),
                    ["ioUringEntersPerOperation"] = Number(result.RingEntersPerOperation),
                    ["p50Ns"] = Number(result.P50Ns),
                    ["p99Ns"] = Number(result.P99Ns),
                    ["worstNs"] = Number(result.WorstNs),
                    ["latencySamples"] = result.LatencySamples,
                    ["rounds"] = result.Rounds,
                    ["spread"] = Number(result.Spread),
                    ["roundNs"] = new JsonArray(result.RoundNs.Select(v => Number(v)).ToArray()),
                    ["invocationsPerRound"] = result.InvocationsPerRound,
                };
            }
            var targets = new JsonArray();
            foreach (TargetCheck check in SpecTargets.Evaluate(row))
            {
                targets.Add(new JsonObject { ["target"] = check.Target, ["met"] = check.Met, ["measured"] = check.Detail });
            }
            rows.Add(new JsonObject
            {
                ["name"] = row.Name,
                ["group"] = row.Group,
                ["async"] = row.IsAsync,
                ["operationsPerInvocation"] = row.OperationsPerInvocation,
                ["callsPerInvocation"] = row.CallsPerInvocation,
                ["inFlight"] = row.InFlight,
                ["busyNeighbours"] = row.BusyNeighbours,
                ["skipped"] = row.Skipped,
                ["results"] = results,
                ["autoRatio"] = Number(row.Ratio),
                ["autoRatioLow"] = Number(row.Estimate.Low),
                ["autoRatioHigh"] = Number(row.Estimate.High),
                ["pairedRounds"] = row.Estimate.Rounds,
                ["verdict"] = BenchTable.VerdictText(row.Estimate.Verdict),
                ["fastestSpindle"] = row.FastestSpindle?.Contender.Title(),
                ["fio"] = row.Fio is { } fio
                    ? new JsonObject
                    {
                        ["command"] = fio.Command,
                        ["iops"] = Number(fio.Iops),
                        ["bytesPerSecond"] = Number(fio.BytesPerSecond),
                        ["cpuNsPerOperation"] = Number(fio.CpuNsPerOperation),
                        ["contextSwitchesPerOperation"] = Number(fio.ContextSwitchesPerOperation),
                        ["ioUringEntersPerOperation"] = Number(fio.RingEntersPerOperation),
                        ["p50Ns"] = Number(fio.P50Ns),
                        ["p99Ns"] = Number(fio.P99Ns),
                        ["worstNs"] = Number(fio.WorstNs),
                        ["autoShare"] = Number(SpecTargets.FioShare(row)),
                    }
                    : null,
                ["fioNote"] = row.Fio is null ? row.FioNote : null,
                ["targets"] = targets,
            });
        }
        var summary = new BenchSummary(report.Rows);
        var root = new JsonObject
        {
            ["summary"] = new JsonObject
            {
                ["faster"] = summary.Faster,
                ["equal"] = summary.Equal,
                ["slower"] = summary.Slower,
                ["medianNoise"] = Number(summary.MedianNoise),
                ["widestNoise"] = Number(summary.WidestNoise),
                ["tieBand"] = RatioEstimate.TieBand,
                ["targetsMet"] = summary.Targets.Met,
                ["targetsNotMet"] = summary.Targets.NotMet,
                ["targetsNotCheckable"] = summary.Targets.Unknown,
            },
            ["date"] = report.Date.ToString("O"),
            ["quick"] = report.Quick,
            ["elapsedSeconds"] = Math.Round(report.Elapsed.TotalSeconds, 1),
            ["directory"] = report.Directory,
            ["fio"] = report.FioVersion,
            ["notes"] = new JsonArray(report.Notes.Select(n => (JsonNode?)JsonValue.Create(n)).ToArray()),
            ["engines"] = report.Engines,
            ["defaultEngine"] = SpindleRandomAccess.DefaultEngine.ToString(),
            ["machine"] = new JsonObject
            {
                ["processors"] = report.Machine.Processors,
                ["cpu"] = report.Machine.CpuModel,
                ["kernel"] = report.Machine.Kernel,
                ["memoryBytes"] = report.Machine.MemoryBytes,
                ["fileSystem"] = report.Machine.FileSystem,
                ["runtime"] = report.Machine.Runtime,
                ["l1DataCacheBytes"] = report.Machine.L1DataCacheBytes,
                ["loadAverage"] = report.Machine.LoadAverage,
            },
            ["settings"] = new JsonObject
            {
                ["rounds"] = report.Settings.Rounds,
                ["maxRounds"] = report.Settings.MaxRounds,
                ["warmupMs"] = report.Settings.WarmupTime.TotalMilliseconds,
                ["roundMs"] = report.Settings.RoundTime.TotalMilliseconds,
                ["fioSeconds"] = report.Settings.FioTime.TotalSeconds,
            },
            ["rows"] = rows,
            ["dispatch"] = DispatchReport.Json(report.Dispatch),
        };
        return root.ToJsonString(new JsonSerializerOptions { WriteIndented = true, Encoder = System.Text.Encodings.Web.JavaScriptEncoder.UnsafeRelaxedJsonEscaping });
    }

    private static JsonNode? Number(double value) => double.IsFinite(value) ? JsonValue.Create(Math.Round(value, 3)) : null;
}
