using System.Globalization;
using Spindle.Workloads;
using Spindle.Tool.Bench;

namespace Spindle.Tool.Reports;

/// <summary>
/// The tables of <c>spindle bench</c>: per row the median time per operation of each contender with
/// Spindle Auto's ratio as the headline; CPU, context switches, io_uring enters and latency per operation beside
/// fio's; the queue-depth sweep.
/// </summary>
public static class BenchTable
{
    /// <summary>The title of the ratio column: the default engine against System.IO.</summary>
    public const string RatioTitle = "Auto / System.IO";

    /// <summary>The terminal's title of <see cref="CpuAndLatency"/>.</summary>
    public const string CpuAndLatencyTitle = "CPU, context switches, io_uring_enter calls and latency per operation (CPU: process user + system time / operations; "
        + "switches: getrusage voluntary + involuntary, every thread; enters: Spindle's meter, fio's counted by perf; p50/p99/worst per operation; fio: lat_ns percentiles)";

    /// <summary>The title of the interval column.</summary>
    public const string IntervalTitle = "95 % interval";

    /// <summary>
    /// The main table of a run: each time is the median per operation with ± the relative half-width of its
    /// 95 % interval over the rounds; the ratio has its own interval and the verdict it supports.
    /// </summary>
    public static TextTable Build(IReadOnlyList<RowResult> rows)
    {
        string[] headers =
        [
            "Row", "System.IO", Contender.SpindleAuto.Title(), RatioTitle, IntervalTitle, "Verdict",
            .. Contenders.NamedEngines.Select(c => c.Title()), "Alloc System.IO", "Alloc Auto", "fio / cp",
        ];
        bool[] right = [false, true, true, true, true, false, true, true, true, true, true, false];
        var table = new TextTable(headers, right);
        foreach (RowResult row in rows)
        {
            if (row.Skipped is not null)
            {
                table.Add(row.Name, "skipped", "", "", "", "", "", "", "", "", "", row.Skipped);
                continue;
            }
            RatioEstimate estimate = row.Estimate;
            table.Add(
                row.Name,
                Time(row.SystemIO),
                Time(row.Auto),
                Ratio(row.Ratio),
                Interval(estimate),
                VerdictText(estimate.Verdict),
                Time(row.For(Contender.SpindleSync)),
                Time(row.For(Contender.SpindleThreadPool)),
                Time(row.For(Contender.SpindleIoUring)),
                SpecTargets.Allocation(row.SystemIO?.AllocatedBytesPerOperation ?? double.NaN),
                SpecTargets.Allocation(row.Auto?.AllocatedBytesPerOperation ?? double.NaN),
                Fio(row));
        }
        return table;
    }

    /// <summary>
    /// CPU time, context switches, <c>io_uring_enter</c> calls and latency per operation of every contender and of fio,
    /// for the rows that record latencies (random reads, sequential O_DIRECT, the sweep) or have a fio job; one line per contender.
    /// </summary>
    public static TextTable CpuAndLatency(IReadOnlyList<RowResult> rows)
    {
        var table = new TextTable(["Row", "Who", "Time/op", "Ops/s", "CPU/op", "Switches/op", "Enters/op", "p50", "p99", "Worst"],
            [false, false, true, true, true, true, true, true, true, true]);
        foreach (RowResult row in MechanismRows(rows))
        {
            string name = row.Name;
            foreach (ContenderResult result in row.Results)
            {
                table.Add(name, result.Contender.Title(), Units.Nanoseconds(result.MedianNs), Rate(result.OperationsPerSecond),
                    Units.Nanoseconds(result.CpuNsPerOperation), PerOperation(result.ContextSwitchesPerOperation), PerOperation(result.RingEntersPerOperation),
                    Units.Nanoseconds(result.P50Ns), Units.Nanoseconds(result.P99Ns), Units.Nanoseconds(result.WorstNs));
                name = "";
            }
            if (row.Fio is { } fio)
            {
                table.Add(name, "fio", Units.Nanoseconds(fio.NsPerOperation), Rate(fio.Iops), Units.Nanoseconds(fio.CpuNsPerOperation),
                    PerOperation(fio.ContextSwitchesPerOperation), PerOperation(fio.RingEntersPerOperation),
                    Units.Nanoseconds(fio.P50Ns), Units.Nanoseconds(fio.P99Ns), Units.Nanoseconds(fio.WorstNs));
            }
            else if (row.HasFioJob)
            {
                table.Add(name, "fio", row.FioNote, "", "", "", "", "", "", "");
            }
        }
        return table;
    }

    /// <summary>The rows whose CPU, context switches and enters per operation the reports show: latency-recording rows and rows with a fio job.</summary>
    public static IReadOnlyList<RowResult> MechanismRows(IReadOnlyList<RowResult> rows) =>
        rows.Where(r => r.Skipped is null && (r.RecordsLatency || r.HasFioJob)).ToList();

    /// <summary>A count per operation (context switches, enters): two decimals, three below 0.1, "n/a" when unknown.</summary>
    public static string PerOperation(double count) => count switch
    {
        double.NaN => "n/a",
        0 => "0",
        < 0.1 => count.ToString("0.000", CultureInfo.InvariantCulture),
        _ => count.ToString("0.00", CultureInfo.InvariantCulture),
    };

    /// <summary>The queue-depth sweep: operations per second at each depth, System.IO, Spindle Auto and fio.</summary>
    public static TextTable Sweep(IReadOnlyList<RowResult> rows)
    {
        var table = new TextTable(["In flight", "System.IO ops/s", "Spindle Auto ops/s", "fio io_uring ops/s", RatioTitle + " (time)", "Auto / fio (ops/s)"],
            [true, true, true, true, true, true]);
        foreach (RowResult row in SweepRows(rows))
        {
            table.Add(
                row.InFlight.ToString(CultureInfo.InvariantCulture),
                Rate(row.SystemIO?.OperationsPerSecond ?? double.NaN),
                Rate(row.Auto?.OperationsPerSecond ?? double.NaN),
                row.Fio is { } fio ? Rate(fio.Iops) : row.FioNote,
                Ratio(row.Ratio),
                double.IsFinite(SpecTargets.FioShare(row)) ? string.Create(CultureInfo.InvariantCulture, $"{SpecTargets.FioShare(row) * 100:0} %") : "n/a");
        }
        return table;
    }

    /// <summary>The sweep rows that ran, by depth.</summary>
    public static IReadOnlyList<RowResult> SweepRows(IReadOnlyList<RowResult> rows) =>
        rows.Where(r => r.Group == "Sweep" && r.Skipped is null && r.BusyNeighbours == 0).OrderBy(r => r.InFlight).ToList();

    /// <summary>The fio cell: fio's time per operation and bandwidth, and Spindle Auto's throughput as a share of it.</summary>
    public static string Fio(RowResult row)
    {
        if (row.Fio is not { } fio)
        {
            return row.FioNote;
        }
        double share = SpecTargets.FioShare(row);
        string tool = fio.Command.StartsWith("fio", StringComparison.Ordinal) ? "" : fio.Command.Split(' ')[0] + ": ";
        return string.Create(CultureInfo.InvariantCulture,
            $"{tool}{Units.Nanoseconds(fio.NsPerOperation)}/op, {fio.BytesPerSecond / Units.MiB:0} MiB/s; Auto {share * 100:0} %");
    }

    /// <summary>Operations per second, whole, with thousands separators.</summary>
    public static string Rate(double perSecond) =>
        double.IsFinite(perSecond) ? perSecond.ToString("N0", CultureInfo.InvariantCulture) : "n/a";

    /// <summary>The verdict as the tables and the chart name it.</summary>
    public static string VerdictText(Verdict verdict) => verdict switch
    {
        Verdict.Faster => "faster",
        Verdict.Slower => "slower",
        Verdict.Equal => "equal",
        _ => "n/a",
    };

    /// <summary>A ratio's interval, <c>0.88–0.97</c>.</summary>
    public static string Interval(RatioEstimate estimate) => double.IsFinite(estimate.Low) && double.IsFinite(estimate.High)
        ? string.Create(CultureInfo.InvariantCulture, $"{estimate.Low:0.00}–{estimate.High:0.00}")
        : "n/a";

    private static string Ratio(double ratio) => double.IsNaN(ratio) ? "n/a" : ratio.ToString("0.00", CultureInfo.InvariantCulture);

    private static string Time(ContenderResult? result) => result is null ? "—"
        : double.IsFinite(result.Spread) ? Units.Nanoseconds(result.MedianNs) + " ±" + Spread(result.Spread)
        : Units.Nanoseconds(result.MedianNs);

    private static string Spread(double fraction) => (fraction * 100).ToString("0", CultureInfo.InvariantCulture) + "%";
}
