using System.Globalization;
using System.Xml.Linq;
using Spindle.Tool.Bench;

namespace Spindle.Tool.Reports;

/// <summary>
/// <c>bench-report.svg</c>: one horizontal bar per row, the best Spindle time over System.IO's, with
/// lines at 1.00 (parity) and 0.50 (the async target). Green bars meet the row's time target.
/// </summary>
public static class RatioChart
{
    private static readonly XNamespace Svg = "http://www.w3.org/2000/svg";
    private const int BarArea = 480;
    private const int RowHeight = 18;
    private const int Top = 40;

    /// <summary>The chart as an SVG document.</summary>
    public static XDocument Build(IReadOnlyList<RowResult> rows, string title)
    {
        // Labels are right-aligned against the bars; about 6.3 px per character at 11 px sans-serif.
        int labelWidth = (int)Math.Max(200, rows.Select(r => r.Name.Length).DefaultIfEmpty(10).Max() * 6.3 + 16);
        double max = Math.Max(2.0, Math.Min(4.0, rows.Select(r => r.Ratio).Where(double.IsFinite).DefaultIfEmpty(1).Max() * 1.1));
        int height = Top + rows.Count * RowHeight + 40;
        int width = labelWidth + BarArea + 80;
        var svg = new XElement(Svg + "svg",
            new XAttribute("width", width), new XAttribute("height", height),
            new XAttribute("viewBox", $"0 0 {width} {height}"), new XAttribute("font-family", "sans-serif"), new XAttribute("font-size", 11),
            new XElement(Svg + "rect", new XAttribute("width", width), new XAttribute("height", height), new XAttribute("fill", "white")),
            new XElement(Svg + "text", new XAttribute("x", 8), new XAttribute("y", 18), new XAttribute("font-size", 14), new XAttribute("font-weight", "bold"), title),
            new XElement(Svg + "text", new XAttribute("x", 8), new XAttribute("y", 32), "best Spindle time / System.IO time (shorter is faster; green meets SPEC §6)"));
        for (int i = 0; i < rows.Count; i++)
        {
            RowResult row = rows[i];
            int y = Top + i * RowHeight;
            svg.Add(new XElement(Svg + "text", new XAttribute("x", labelWidth - 6), new XAttribute("y", y + 13), new XAttribute("text-anchor", "end"), row.Name));
            if (!double.IsFinite(row.Ratio))
            {
                svg.Add(new XElement(Svg + "text", new XAttribute("x", labelWidth + 4), new XAttribute("y", y + 13), new XAttribute("fill", "gray"), row.Skipped ?? "n/a"));
                continue;
            }
            double target = row.IsAsync && row.Group != "Beyond" ? 0.5 : 1.0;
            double barWidth = Math.Max(1, Math.Min(row.Ratio, max) / max * BarArea);
            svg.Add(new XElement(Svg + "rect",
                new XAttribute("x", labelWidth), new XAttribute("y", y + 3), new XAttribute("width", F(barWidth)), new XAttribute("height", RowHeight - 5),
                new XAttribute("fill", row.Ratio <= target ? "#3a9d5d" : "#d0534a")));
            svg.Add(new XElement(Svg + "text", new XAttribute("x", F(labelWidth + barWidth + 4)), new XAttribute("y", y + 13), row.Ratio.ToString("0.00", CultureInfo.InvariantCulture)));
        }
        foreach (double mark in new[] { 0.5, 1.0 })
        {
            double x = labelWidth + mark / max * BarArea;
            svg.Add(new XElement(Svg + "line", new XAttribute("x1", F(x)), new XAttribute("x2", F(x)), new XAttribute("y1", Top - 4), new XAttribute("y2", height - 30),
                new XAttribute("stroke", "black"), new XAttribute("stroke-dasharray", "4 3")));
            svg.Add(new XElement(Svg + "text", new XAttribute("x", F(x)), new XAttribute("y", height - 16), new XAttribute("text-anchor", "middle"), mark.ToString("0.00", CultureInfo.InvariantCulture)));
        }
        return new XDocument(svg);
    }

    private static string F(double value) => value.ToString("0.#", CultureInfo.InvariantCulture);
}
