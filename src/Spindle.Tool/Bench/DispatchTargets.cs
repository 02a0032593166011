using Spindle.Workloads;

namespace Spindle.Tool.Bench;

/// <summary>
/// The dispatch matrix's targets for Spindle's default (Auto), checked per cell on the medians:
/// operations/s at least System.IO's (0.97 counts where both are within 3 % of the limit); where the
/// continuation does nothing, at least 95 % of the better fio engine at no more than 1.5× its CPU per
/// read; where it works, scaling from one core to all at least System.IO's (within 5 %) and a median
/// read latency within 1.25× System.IO's; and a worst single wait no longer than System.IO's.
/// </summary>
public static class DispatchTargets
{
    /// <summary>Every target that applies to <paramref name="cell"/>; <paramref name="partner"/> is the same cell on the other core count, when it ran.</summary>
    public static IReadOnlyList<TargetCheck> Evaluate(DispatchCellResult cell, DispatchCellResult? partner)
    {
        var checks = new List<TargetCheck>();
        if (cell.Skipped is not null || cell.SystemIO is not { } systemIO || cell.Auto is not { } auto)
        {
            return checks;
        }
        FioResult? limit = cell.Limit;
        bool nearLimit = limit is not null && systemIO.OperationsPerSecond >= 0.97 * limit.Iops && auto.OperationsPerSecond >= 0.97 * limit.Iops;
        double floor = nearLimit ? 0.97 : 1.00;
        checks.Add(new($"Auto ops/s ≥ {floor:0.00} × System.IO's", cell.Ratio >= floor,
            $"{cell.Ratio:0.00}{(nearLimit ? " (both within 3 % of the limit)" : "")}"));
        if (cell.Cell.SpinMicroseconds == 0)
        {
            checks.Add(limit is null
                ? new("Auto ops/s ≥ 95 % of the limit", null, cell.FioNote)
                : new("Auto ops/s ≥ 95 % of the limit", cell.ShareOfLimit >= 0.95, $"{cell.ShareOfLimit * 100:0} % of fio {cell.LimitEngine}"));
            checks.Add(limit is null || !double.IsFinite(limit.CpuNsPerOperation) || !double.IsFinite(auto.CpuNsPerOperation)
                ? new("Auto CPU/op ≤ 1.5× the limit's", null, limit is null ? cell.FioNote : "CPU time not reported")
                : new("Auto CPU/op ≤ 1.5× the limit's", auto.CpuNsPerOperation <= 1.5 * limit.CpuNsPerOperation,
                    $"{auto.CpuNsPerOperation / limit.CpuNsPerOperation:0.00}× ({Units.Nanoseconds(auto.CpuNsPerOperation)} vs {Units.Nanoseconds(limit.CpuNsPerOperation)})"));
        }
        else
        {
            checks.Add(new("Auto p50 ≤ 1.25× System.IO's", auto.P50Ns <= 1.25 * systemIO.P50Ns,
                $"{auto.P50Ns / systemIO.P50Ns:0.00}× ({Units.Nanoseconds(auto.P50Ns)} vs {Units.Nanoseconds(systemIO.P50Ns)})"));
            if (!cell.Cell.OneCore && partner?.SystemIO is { } oneSystemIO && partner.Auto is { } oneAuto)
            {
                double autoScale = auto.OperationsPerSecond / oneAuto.OperationsPerSecond;
                double systemIOScale = systemIO.OperationsPerSecond / oneSystemIO.OperationsPerSecond;
                checks.Add(new("Auto scaling 1 core → all ≥ 0.95 × System.IO's", autoScale >= 0.95 * systemIOScale,
                    $"{autoScale:0.00}× vs {systemIOScale:0.00}×"));
            }
        }
        checks.Add(new("Auto worst wait ≤ System.IO's", auto.WorstWaitNs <= systemIO.WorstWaitNs,
            $"{Units.Nanoseconds(auto.WorstWaitNs)} vs {Units.Nanoseconds(systemIO.WorstWaitNs)}"));
        return checks;
    }

    /// <summary>Every cell's checks, in matrix order.</summary>
    public static IEnumerable<(DispatchCellResult Cell, TargetCheck Check)> All(DispatchMatrixResult matrix) =>
        from cell in matrix.Cells
        from check in Evaluate(cell, matrix.PartnerOf(cell))
        select (cell, check);
}
