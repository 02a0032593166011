using Spindle.Benchmarks.Workloads;

namespace Spindle.Tool.Bench;

/// <summary>One SPEC §6 target checked against a row's figures.</summary>
/// <param name="Target">The target as SPEC §6 words it.</param>
/// <param name="Met">True or false; null when the figure needed is missing (e.g. fio not installed).</param>
/// <param name="Detail">The measured value, or why it could not be checked.</param>
public sealed record TargetCheck(string Target, bool? Met, string Detail);

/// <summary>SPEC §6's performance targets, applied to the rows they name.</summary>
public static class SpecTargets
{
    /// <summary>Every target that applies to <paramref name="row"/>, checked.</summary>
    public static IReadOnlyList<TargetCheck> Evaluate(RowResult row)
    {
        var checks = new List<TargetCheck>();
        if (row.Skipped is not null || row.SystemIO is not { } systemIO || row.BestSpindle is not { } best)
        {
            return checks;
        }
        double ratio = row.Ratio;
        checks.Add(new("time ≤ 1.00 × System.IO", ratio <= 1.0, $"{ratio:0.00} ({best.Contender.Title()})"));
        double worstAllocation = row.Results.Where(r => r.Contender != Contender.SystemIO).Max(r => r.AllocatedBytesPerOperation);
        // Less than a byte per operation is rounding of a per-batch count, not an allocation.
        checks.Add(new("allocated ≤ System.IO", worstAllocation <= systemIO.AllocatedBytesPerOperation + 1,
            $"{Allocation(worstAllocation)} vs {Allocation(systemIO.AllocatedBytesPerOperation)}"));
        if (row.IsAsync && row.Group != "Beyond")
        {
            checks.Add(new("async: time ≤ 0.50 × System.IO", ratio <= 0.5, $"{ratio:0.00}"));
        }
        if (row.IsAsync && row.Group == "RandomAccess" && row.CallsPerInvocation > 0)
        {
            // One boxed async method per invocation is the benchmark's own; spread over the calls it is under a byte.
            ContenderResult worst = row.Results.Where(r => r.Contender != Contender.SystemIO).MaxBy(row.AllocatedPerCall)!;
            double perCall = row.AllocatedPerCall(worst);
            checks.Add(new("steady state: 0 B per ReadAsync/WriteAsync (< 1 B per call)", perCall < 1, $"{perCall:0.00} B per call ({worst.Contender.Title()})"));
        }
        if (row.Name.StartsWith("RandomRead4K.Cached(QD 32", StringComparison.Ordinal))
        {
            checks.Add(new("≥ 3× System.IO ops/s", 1 / ratio >= 3, $"{1 / ratio:0.00}×"));
            checks.Add(FioShare("≥ 80 % of fio psync", row, best, 0.8));
        }
        if (row.Name.StartsWith("RandomRead4K.Direct(QD 32", StringComparison.Ordinal))
        {
            checks.Add(new("≥ 2× System.IO ops/s", 1 / ratio >= 2, $"{1 / ratio:0.00}×"));
            checks.Add(FioShare("≥ 90 % of fio io_uring QD 32", row, best, 0.9));
        }
        if (row.Name.StartsWith("FileCopy", StringComparison.Ordinal))
        {
            checks.Add(row.Fio is null
                ? new("spindle copy faster than cp", null, row.FioNote)
                : new("spindle copy faster than cp", SpecTargets.FioShare(row) > 1, $"{SpecTargets.FioShare(row):0.00}× cp's speed"));
        }
        if (row.Name.StartsWith("Sequential", StringComparison.Ordinal))
        {
            checks.Add(FioShare("≥ 90 % of fio's bandwidth", row, best, 0.9));
        }
        return checks;
    }

    /// <summary>Spindle's best throughput as a share of fio's.</summary>
    public static double FioShare(RowResult row) =>
        row.Fio is { } fio && row.BestSpindle is { } best && best.MedianNs > 0 ? fio.NsPerOperation / best.MedianNs : double.NaN;

    /// <summary>Bytes per operation as the table shows them.</summary>
    public static string Allocation(double bytes) => bytes switch
    {
        double.NaN => "n/a",
        < 10 => $"{bytes:0.#} B",
        _ => Units.Bytes((long)Math.Round(bytes)),
    };

    private static TargetCheck FioShare(string target, RowResult row, ContenderResult best, double needed)
    {
        if (row.Fio is null)
        {
            return new(target, null, row.FioNote);
        }
        double share = FioShare(row);
        return new(target, share >= needed, $"{share * 100:0} % ({best.Contender.Title()})");
    }
}
