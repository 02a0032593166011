using System.Globalization;
using System.Xml.Linq;
using Spindle.Tool.Bench;
using static Spindle.Tool.Reports.SvgShapes;

namespace Spindle.Tool.Reports;

/// <summary>
/// <c>bench-sweep.svg</c>: operations per second of O_DIRECT 4 KiB random reads against the number in
/// flight (1 to 128, evenly spaced on a log scale), one line each for System.IO, Spindle Auto and fio.
/// </summary>
public static class SweepChart
{
    private const int Left = 78;
    private const int Top = 60;
    private const int PlotWidth = 520;
    private const int PlotHeight = 280;

    /// <summary>The series of the chart: name, colour, dash pattern (null for solid) and the value at each sweep row.</summary>
    private static readonly (string Name, string Color, string? Dash, Func<RowResult, double> Value)[] s_series =
    [
        ("System.IO", "#5b6b8c", null, r => r.SystemIO?.OperationsPerSecond ?? double.NaN),
        ("Spindle Auto", "#2e8b57", null, r => r.Auto?.OperationsPerSecond ?? double.NaN),
        ("fio io_uring", "#d2691e", "6 4", r => r.Fio?.Iops ?? double.NaN),
    ];

    /// <summary>The chart of the sweep rows among <paramref name="rows"/>, or null when none ran.</summary>
    public static XDocument? Build(IReadOnlyList<RowResult> rows, string title)
    {
        IReadOnlyList<RowResult> sweep = BenchTable.SweepRows(rows);
        if (sweep.Count == 0)
        {
            return null;
        }
        double highest = sweep.SelectMany(r => s_series.Select(s => s.Value(r))).Where(double.IsFinite).DefaultIfEmpty(1).Max();
        double step = NiceStep(highest / 5);
        double top = Math.Ceiling(highest * 1.05 / step) * step;
        int width = Left + PlotWidth + 30, height = Top + PlotHeight + 56;
        XElement svg = Canvas(width, height, 11);
        svg.Add(
            Text(8, 18, title, bold: true, size: 14),
            Text(8, 34, "O_DIRECT 4 KiB random reads: operations per second against reads in flight (higher is better)"));

        // Legend on one line under the subtitle.
        double legendX = Left;
        foreach ((string name, string color, string? dash, _) in s_series)
        {
            svg.Add(Line(legendX, 47, legendX + 24, 47, color, 2.5, dash));
            svg.Add(Text(legendX + 30, 51, name));
            legendX += 40 + name.Length * 6.5;
        }

        for (double tick = 0; tick <= top + step / 2; tick += step)
        {
            double y = Y(tick, top);
            svg.Add(Line(Left, y, Left + PlotWidth, y, "#dddddd"));
            svg.Add(Text(Left - 6, y + 4, tick.ToString("N0", CultureInfo.InvariantCulture), anchor: "end"));
        }
        for (int i = 0; i < sweep.Count; i++)
        {
            double x = X(i, sweep.Count);
            svg.Add(Line(x, Top + PlotHeight, x, Top + PlotHeight + 4, "black"));
            svg.Add(Text(x, Top + PlotHeight + 17, sweep[i].InFlight.ToString(CultureInfo.InvariantCulture), anchor: "middle"));
        }
        svg.Add(Line(Left, Top + PlotHeight, Left + PlotWidth, Top + PlotHeight, "black"));
        svg.Add(Line(Left, Top, Left, Top + PlotHeight, "black"));
        svg.Add(Text(Left + PlotWidth / 2.0, Top + PlotHeight + 34, "reads in flight", anchor: "middle"));
        svg.Add(new XElement(Svg + "text", new XAttribute("transform", $"translate(14 {Top + PlotHeight / 2}) rotate(-90)"),
            new XAttribute("text-anchor", "middle"), "operations per second"));

        foreach ((string name, string color, string? dash, Func<RowResult, double> value) in s_series)
        {
            var points = new List<string>();
            for (int i = 0; i < sweep.Count; i++)
            {
                double v = value(sweep[i]);
                if (!double.IsFinite(v))
                {
                    continue;
                }
                double x = X(i, sweep.Count), y = Y(v, top);
                points.Add($"{F(x)},{F(y)}");
                svg.Add(new XElement(Svg + "circle", new XAttribute("cx", F(x)), new XAttribute("cy", F(y)), new XAttribute("r", 3), new XAttribute("fill", color),
                    new XElement(Svg + "title", $"{name}, {sweep[i].InFlight} in flight: {v.ToString("N0", CultureInfo.InvariantCulture)} ops/s")));
            }
            if (points.Count > 1)
            {
                var line = new XElement(Svg + "polyline", new XAttribute("points", string.Join(' ', points)), new XAttribute("fill", "none"),
                    new XAttribute("stroke", color), new XAttribute("stroke-width", 2.5));
                if (dash is not null)
                {
                    line.Add(new XAttribute("stroke-dasharray", dash));
                }
                svg.Add(line);
            }
        }
        return new XDocument(svg);
    }

    /// <summary>A round axis step (1, 2 or 5 times a power of ten) at least <paramref name="rough"/>.</summary>
    public static double NiceStep(double rough)
    {
        if (!(rough > 0))
        {
            return 1;
        }
        double power = Math.Pow(10, Math.Floor(Math.Log10(rough)));
        foreach (double factor in new[] { 1.0, 2.0, 5.0, 10.0 })
        {
            if (factor * power >= rough)
            {
                return factor * power;
            }
        }
        return 10 * power;
    }

    private static double X(int index, int count) => count == 1 ? Left + PlotWidth / 2.0 : Left + 20 + index * (PlotWidth - 40.0) / (count - 1);

    private static double Y(double value, double top) => Top + PlotHeight - value / top * PlotHeight;

    private static string F(double value) => Number(value);
}
