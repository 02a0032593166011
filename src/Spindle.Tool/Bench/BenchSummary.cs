using System.Globalization;

namespace Spindle.Tool.Bench;

/// <summary>
/// The verdict of a run in one place: how many rows Spindle Auto is faster, equal within noise or slower
/// than System.IO, with the noise the run measured; and, separately, how many performance targets were met.
/// </summary>
public sealed class BenchSummary
{
    /// <summary>Rows whose whole interval lies below 1 − the tie band.</summary>
    public int Faster { get; }

    /// <summary>Rows whose interval reaches into 1 ± the tie band.</summary>
    public int Equal { get; }

    /// <summary>Rows whose whole interval lies above 1 + the tie band.</summary>
    public int Slower { get; }

    /// <summary>Rows without a ratio (skipped).</summary>
    public int Unknown { get; }

    /// <summary>The median over the rows of the ratio interval's relative half-width (0.05 = ±5 %).</summary>
    public double MedianNoise { get; }

    /// <summary>The widest row's relative half-width.</summary>
    public double WidestNoise { get; }

    /// <summary>Performance target checks met, not met, and not checkable (a figure missing).</summary>
    public (int Met, int NotMet, int Unknown) Targets { get; }

    /// <summary>Summarizes <paramref name="rows"/>.</summary>
    public BenchSummary(IReadOnlyList<RowResult> rows)
    {
        var noise = new List<double>();
        foreach (RowResult row in rows)
        {
            RatioEstimate estimate = row.Estimate;
            switch (estimate.Verdict)
            {
                case Verdict.Faster: Faster++; break;
                case Verdict.Equal: Equal++; break;
                case Verdict.Slower: Slower++; break;
                default: Unknown++; break;
            }
            if (double.IsFinite(estimate.RelativeHalfWidth))
            {
                noise.Add(estimate.RelativeHalfWidth);
            }
        }
        MedianNoise = noise.Count > 0 ? Harness.Median(noise) : double.NaN;
        WidestNoise = noise.Count > 0 ? noise.Max() : double.NaN;
        int met = 0, notMet = 0, unknown = 0;
        foreach (TargetCheck check in rows.SelectMany(SpecTargets.Evaluate))
        {
            _ = check.Met switch { true => met++, false => notMet++, null => unknown++ };
        }
        Targets = (met, notMet, unknown);
    }

    /// <summary>
    /// The headline line: <c>Spindle Auto vs System.IO: 40 rows faster, 45 equal within noise, 14 slower (noise: ±5 % median, ±18 % widest row; …)</c>.
    /// </summary>
    public string Headline() => string.Create(CultureInfo.InvariantCulture,
        $"Spindle Auto vs System.IO: {Faster} {Rows(Faster)} faster, {Equal} equal within noise, {Slower} slower{(Unknown > 0 ? $", {Unknown} skipped" : "")} "
        + $"(noise: the ratio's 95 % interval is ±{Percent(MedianNoise)} on the median row, ±{Percent(WidestNoise)} on the widest; "
        + $"differences under {RatioEstimate.TieBand * 100:0} % count as equal)");

    /// <summary>The targets line, kept apart from the verdict.</summary>
    public string TargetsLine() =>
        $"performance targets: {Targets.Met} met, {Targets.NotMet} not met{(Targets.Unknown > 0 ? $", {Targets.Unknown} not checkable" : "")} (the \"Performance targets\" section of bench-report.md)";

    private static string Rows(int n) => n == 1 ? "row" : "rows";

    private static string Percent(double fraction) =>
        double.IsFinite(fraction) ? (fraction * 100).ToString(fraction < 0.1 ? "0.0" : "0", CultureInfo.InvariantCulture) + " %" : "n/a";
}
