using System.Globalization;
using System.Xml.Linq;
using Spindle.Tool.Bench;
using static Spindle.Tool.Reports.SvgShapes;

namespace Spindle.Tool.Reports;

/// <summary>
/// <c>bench-report.svg</c>: one horizontal bar per row, Spindle Auto's time over System.IO's, with a
/// whisker for the ratio's 95 % interval. The colour is the verdict (green faster, grey equal within
/// noise, red slower), never the targets: those are marked apart, as a diamond at each row's target. An
/// x axis with ticks over the whole range and its title, a dashed line at 1.00 (parity). The values sit in
/// their own column right of the bars, so no line crosses them.
/// </summary>
public static class RatioChart
{
    /// <summary>The fill of a faster row's bar.</summary>
    public const string FasterColor = "#3a9d5d";

    /// <summary>The fill of an equal row's bar.</summary>
    public const string EqualColor = "#a8a8a8";

    /// <summary>The fill of a slower row's bar.</summary>
    public const string SlowerColor = "#d0534a";

    /// <summary>The colour of the target marks.</summary>
    public const string TargetColor = "#6a3fb5";

    private const int BarArea = 520;
    private const int ValueColumn = 48;
    private const int RowHeight = 18;
    private const int Top = 80;

    /// <summary>The chart as an SVG document; <paramref name="engines"/> says what Auto resolved to.</summary>
    public static XDocument Build(IReadOnlyList<RowResult> rows, string title, string engines)
    {
        // Labels are right-aligned against the bars; about 6.3 px per character at 11 px sans-serif.
        int labelWidth = (int)Math.Max(200, rows.Select(r => r.Name.Length).DefaultIfEmpty(10).Max() * 6.3 + 16);
        // The scale ends just past the longest bar or whisker (at least past 1.00), so ticks cover every value
        // and no half of the canvas stays empty; beyond 4.00 a bar is cut and its value marked ▸.
        double longest = rows.SelectMany(r => new[] { r.Ratio, r.Estimate.High }).Where(double.IsFinite).DefaultIfEmpty(1).Max();
        double step = longest <= 1.5 ? 0.1 : longest <= 2.5 ? 0.25 : 0.5;
        double max = Math.Min(Math.Ceiling(Math.Max(longest * 1.02, 1.1) / step) * step, 4.0);
        int axisY = Top + rows.Count * RowHeight + 4;
        int height = axisY + 44;
        int width = labelWidth + BarArea + ValueColumn + 16;
        double X(double ratio) => labelWidth + Math.Min(ratio, max) / max * BarArea;

        XElement svg = Canvas(width, height, 11);
        svg.Add(
            Text(8, 18, title, size: 14, bold: true),
            Text(8, 34, "Bar: Spindle Auto (what a user gets without configuring an engine) time / System.IO time, median of the rounds; whisker: its 95 % interval."),
            Text(8, 48, $"Colour = verdict: differences under {RatioEstimate.TieBand * 100:0} % or within the interval count as equal. {engines}."));
        int legendX = 8;
        foreach ((string color, string label) in new[] { (FasterColor, "faster"), (EqualColor, "equal within noise"), (SlowerColor, "slower") })
        {
            svg.Add(Rect(legendX, 55, 10, 10, color), Text(legendX + 14, 64, label));
            legendX += 24 + (int)(label.Length * 6.3);
        }
        svg.Add(Diamond(legendX + 5, 60), Text(legendX + 14, 64, "the row's time target (0.50 for async FileStream and RandomAccess rows, else 1.00), apart from the verdict"));

        // Grid and ticks first, so bars and whiskers draw over them.
        for (int k = 0; k * step <= max + 1e-9; k++)
        {
            double value = k * step, x = X(value);
            bool parity = Math.Abs(value - 1) < 1e-9;
            svg.Add(parity ? Line(x, Top - 2, x, axisY, "black", dash: "4 3") : Line(x, Top - 2, x, axisY, "#e4e4e4"));
            svg.Add(Line(x, axisY, x, axisY + 4, "black"));
            svg.Add(Text(x, axisY + 15, value.ToString(step < 0.25 ? "0.0" : "0.00", CultureInfo.InvariantCulture), anchor: "middle"));
        }
        svg.Add(Line(labelWidth, axisY, labelWidth + BarArea, axisY, "black"));
        svg.Add(Text(labelWidth + BarArea / 2.0, axisY + 32, "Spindle Auto time / System.IO time (1.00 = the same; lower is faster)", anchor: "middle", bold: true));

        for (int i = 0; i < rows.Count; i++)
        {
            RowResult row = rows[i];
            int y = Top + i * RowHeight;
            svg.Add(Text(labelWidth - 6, y + 13, row.Name, anchor: "end"));
            RatioEstimate estimate = row.Estimate;
            if (!double.IsFinite(row.Ratio))
            {
                svg.Add(Text(labelWidth + 4, y + 13, row.Skipped ?? "n/a", fill: "gray"));
                continue;
            }
            string color = estimate.Verdict switch { Verdict.Faster => FasterColor, Verdict.Slower => SlowerColor, _ => EqualColor };
            double barWidth = Math.Max(1, X(row.Ratio) - labelWidth);
            XElement bar = Rect(labelWidth, y + 3, barWidth, RowHeight - 5, color);
            bar.Add(new XElement(Svg + "title", string.Create(CultureInfo.InvariantCulture,
                $"{row.Name}: Spindle Auto / System.IO = {row.Ratio:0.00} (95 % interval {estimate.Low:0.00}–{estimate.High:0.00}, {estimate.Rounds} rounds): {BenchTable.VerdictText(estimate.Verdict)}")));
            svg.Add(bar);
            if (double.IsFinite(estimate.Low) && double.IsFinite(estimate.High))
            {
                double mid = y + 3 + (RowHeight - 5) / 2.0;
                svg.Add(Line(X(estimate.Low), mid, X(estimate.High), mid, "black"),
                    Line(X(estimate.Low), mid - 3, X(estimate.Low), mid + 3, "black"),
                    Line(X(estimate.High), mid - 3, X(estimate.High), mid + 3, "black"));
            }
            double target = row.IsAsync && row.Group is "FileStream" or "RandomAccess" ? 0.5 : 1.0;
            svg.Add(Diamond(X(target), y + RowHeight / 2.0 + 1));
            svg.Add(Text(labelWidth + BarArea + ValueColumn, y + 13, row.Ratio.ToString("0.00", CultureInfo.InvariantCulture) + (row.Ratio > max ? " ▸" : ""), anchor: "end"));
        }
        return new XDocument(svg);
    }

    private static XElement Rect(double x, double y, double width, double height, string fill) =>
        new(Svg + "rect", new XAttribute("x", Number(x)), new XAttribute("y", Number(y)), new XAttribute("width", Number(width)),
            new XAttribute("height", Number(height)), new XAttribute("fill", fill));

    private static XElement Diamond(double x, double y) =>
        new(Svg + "polygon", new XAttribute("class", "target"), new XAttribute("fill", TargetColor),
            new XAttribute("points", $"{Number(x)},{Number(y - 4)} {Number(x + 4)},{Number(y)} {Number(x)},{Number(y + 4)} {Number(x - 4)},{Number(y)}"));
}
