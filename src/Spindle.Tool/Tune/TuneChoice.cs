using Spindle.Workloads;

namespace Spindle.Tool.Tune;

/// <summary>
/// The recommendation for one direction: the fastest finalist, unless others tie with it within the noise,
/// in which case the rule picks among the tied: no option before an option, then the smaller buffer, then the
/// smaller block. The rule, not chance, decides between settings the machine cannot tell apart, so two runs
/// recommend the same or say they tie.
/// </summary>
/// <param name="Fastest">The finalist with the lowest median time.</param>
/// <param name="Pick">The recommendation.</param>
/// <param name="Tied">Every finalist within the noise of the fastest (the fastest included), in the rule's order.</param>
/// <param name="Noise">The tie threshold used: relative to the fastest's time.</param>
public sealed record TuneChoice(TuneMeasurement Fastest, TuneMeasurement Pick, IReadOnlyList<TuneMeasurement> Tied, double Noise)
{
    /// <summary>Differences under this (5 %) count as a tie even when the measured spread is smaller.</summary>
    public const double TieFloor = 0.05;

    /// <summary>The rule, as the output states it.</summary>
    public const string Rule = "no option before an option, then the smaller buffer, then the smaller block";

    /// <summary>
    /// Chooses among <paramref name="finalists"/> (one direction). A cell ties with the fastest when its median is
    /// within the larger of <see cref="TieFloor"/> and the two cells' spreads added (their intervals overlap).
    /// </summary>
    public static TuneChoice From(IReadOnlyList<TuneMeasurement> finalists)
    {
        TuneMeasurement fastest = finalists.MinBy(m => m.Time)!;
        double fastestSpread = double.IsFinite(fastest.Spread) ? fastest.Spread : 0;
        double Threshold(TuneMeasurement m) => Math.Max(TieFloor, fastestSpread + (double.IsFinite(m.Spread) ? m.Spread : 0));
        List<TuneMeasurement> tied = finalists
            .Where(m => m.Time.TotalNanoseconds <= fastest.Time.TotalNanoseconds * (1 + Threshold(m)))
            .OrderBy(m => m.Option == TuneOption.None ? 0 : 1).ThenBy(m => m.Buffer).ThenBy(m => m.Block)
            .ToList();
        double noise = tied.Count > 1 ? tied.Max(Threshold) : Math.Max(TieFloor, fastestSpread);
        return new TuneChoice(fastest, tied[0], tied, noise);
    }

    /// <summary>The direction chosen for.</summary>
    public Direction Direction => Pick.Direction;
}
