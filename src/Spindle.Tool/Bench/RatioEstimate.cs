namespace Spindle.Tool.Bench;

/// <summary>What a row's ratio says once its noise is taken into account.</summary>
public enum Verdict
{
    /// <summary>The row has no ratio (skipped, or a contender missing).</summary>
    Unknown,

    /// <summary>The whole interval lies below 1 − <see cref="RatioEstimate.TieBand"/>: Spindle is faster.</summary>
    Faster,

    /// <summary>The interval reaches into 1 ± <see cref="RatioEstimate.TieBand"/>: no difference this run can tell.</summary>
    Equal,

    /// <summary>The whole interval lies above 1 + <see cref="RatioEstimate.TieBand"/>: Spindle is slower.</summary>
    Slower,
}

/// <summary>
/// Spindle Auto's time over System.IO's for one row, from rounds in which both ran back to back: the
/// median of the per-round ratios and a distribution-free confidence interval for it (order statistics
/// of the sorted ratios, at least 95 % coverage when there are 6 rounds or more). Pairing by round
/// cancels drift that hits both contenders of a round alike; the interval shows what is left.
/// </summary>
/// <param name="Median">The median ratio; below 1 Spindle is faster.</param>
/// <param name="Low">The interval's lower end.</param>
/// <param name="High">The interval's upper end.</param>
/// <param name="Rounds">How many paired rounds it comes from.</param>
public sealed record RatioEstimate(double Median, double Low, double High, int Rounds)
{
    /// <summary>
    /// Differences smaller than this (3 %) count as equal even when the interval is narrower: the
    /// smallest difference a run on a shared machine claims to resolve.
    /// </summary>
    public const double TieBand = 0.03;

    /// <summary>The verdict: faster, equal within noise, or slower.</summary>
    public Verdict Verdict =>
        !double.IsFinite(Median) ? Verdict.Unknown
        : High < 1 - TieBand ? Verdict.Faster
        : Low > 1 + TieBand ? Verdict.Slower
        : Verdict.Equal;

    /// <summary>
    /// True while more rounds could still change the verdict: the interval crosses an edge of the tie
    /// band (it could end up wholly inside or wholly outside it).
    /// </summary>
    public bool Unsettled =>
        double.IsFinite(Median) && (Straddles(1 - TieBand) || Straddles(1 + TieBand));

    /// <summary>Half the interval's width relative to the median: the noise of this row's ratio.</summary>
    public double RelativeHalfWidth => Median > 0 ? (High - Low) / 2 / Median : double.NaN;

    /// <summary>No figure.</summary>
    public static RatioEstimate None { get; } = new(double.NaN, double.NaN, double.NaN, 0);

    /// <summary>The estimate from paired per-round times (the shorter list decides how many pairs).</summary>
    public static RatioEstimate FromRounds(IReadOnlyList<double> systemIO, IReadOnlyList<double> auto)
    {
        int n = Math.Min(systemIO.Count, auto.Count);
        if (n == 0)
        {
            return None;
        }
        var ratios = new double[n];
        for (int i = 0; i < n; i++)
        {
            ratios[i] = systemIO[i] > 0 ? auto[i] / systemIO[i] : double.NaN;
        }
        if (ratios.Any(r => !double.IsFinite(r)))
        {
            return None;
        }
        Array.Sort(ratios);
        (double low, double high) = MedianInterval(ratios);
        return new RatioEstimate(Harness.Median(ratios), low, high, n);
    }

    /// <summary>
    /// The confidence interval for the median of <paramref name="sorted"/>: the k-th smallest and k-th
    /// largest values, k the largest rank with P(Binomial(n, ½) &lt; k) ≤ 2.5 % (at least 1, so a handful
    /// of rounds gives their whole range).
    /// </summary>
    public static (double Low, double High) MedianInterval(IReadOnlyList<double> sorted)
    {
        int n = sorted.Count;
        if (n == 0)
        {
            return (double.NaN, double.NaN);
        }
        int k = 1;
        while (k < (n + 1) / 2 && BinomialBelow(n, k + 1) <= 0.025)
        {
            k++;
        }
        return (sorted[k - 1], sorted[n - k]);
    }

    /// <summary>The relative half-width of the median interval of <paramref name="values"/> (any order).</summary>
    public static double RelativeSpread(IReadOnlyList<double> values)
    {
        if (values.Count == 0 || values.Any(v => !double.IsFinite(v)))
        {
            return double.NaN;
        }
        double[] sorted = values.Order().ToArray();
        (double low, double high) = MedianInterval(sorted);
        double median = Harness.Median(sorted);
        return median > 0 ? (high - low) / 2 / median : double.NaN;
    }

    private bool Straddles(double edge) => Low < edge && High > edge;

    // P(X < k) for X ~ Binomial(n, 1/2).
    private static double BinomialBelow(int n, int k)
    {
        double sum = 0, term = Math.Pow(0.5, n);   // P(X = 0)
        for (int i = 0; i < k; i++)
        {
            sum += term;
            term = term * (n - i) / (i + 1);
        }
        return sum;
    }
}
