using System.Globalization;
using Spindle.Benchmarks.Workloads;
using Spindle.Tool.Bench;

namespace Spindle.Tool.Reports;

/// <summary>The one table of <c>spindle bench</c>: per row the median time per operation of each contender, the ratio, allocations and fio.</summary>
public static class BenchTable
{
    /// <summary>Builds the table of a run.</summary>
    public static TextTable Build(IReadOnlyList<RowResult> rows)
    {
        string[] headers = ["Row", "System.IO", .. Contenders.SpindleColumns.Select(c => c.Title()), "Ratio", "Alloc System.IO", "Alloc Spindle", "fio / cp"];
        bool[] right = [false, true, true, true, true, true, true, true, false];
        var table = new TextTable(headers, right);
        foreach (RowResult row in rows)
        {
            if (row.Skipped is not null)
            {
                table.Add(row.Name, "skipped", "", "", "", "", "", "", row.Skipped);
                continue;
            }
            table.Add(
                row.Name,
                Time(row.SystemIO),
                Time(row.For(Contender.SpindleSync)),
                Time(row.For(Contender.SpindleThreadPool)),
                Time(row.For(Contender.SpindleIoUring)),
                double.IsNaN(row.Ratio) ? "n/a" : row.Ratio.ToString("0.00", CultureInfo.InvariantCulture),
                SpecTargets.Allocation(row.SystemIO?.AllocatedBytesPerOperation ?? double.NaN),
                SpecTargets.Allocation(row.BestSpindle?.AllocatedBytesPerOperation ?? double.NaN),
                Fio(row));
        }
        return table;
    }

    /// <summary>The fio cell: fio's time per operation and bandwidth, and Spindle's share of fio's throughput.</summary>
    public static string Fio(RowResult row)
    {
        if (row.Fio is not { } fio)
        {
            return row.FioNote;
        }
        double share = SpecTargets.FioShare(row);
        string tool = fio.Command.StartsWith("fio", StringComparison.Ordinal) ? "" : fio.Command.Split(' ')[0] + ": ";
        return string.Create(CultureInfo.InvariantCulture,
            $"{tool}{Units.Nanoseconds(fio.NsPerOperation)}/op, {fio.BytesPerSecond / Units.MiB:0} MiB/s; Spindle {share * 100:0} %");
    }

    private static string Time(ContenderResult? result) => result is null ? "—" : Units.Nanoseconds(result.MedianNs);
}
