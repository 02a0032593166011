using System.Globalization;
using System.Xml.Linq;
using Spindle.Tool.Bench;
using static Spindle.Tool.Reports.SvgShapes;

namespace Spindle.Tool.Reports;

/// <summary>
/// <c>bench-report.svg</c>: one horizontal bar per row, Spindle Auto's time over System.IO's, with dashed
/// lines at 1.00 (parity) and 0.50 (the async target). Green bars meet the row's time target. The values
/// sit in their own column right of the bars, so no reference line crosses them.
/// </summary>
public static class RatioChart
{
    private const int BarArea = 520;
    private const int ValueColumn = 48;
    private const int RowHeight = 18;
    private const int Top = 62;

    /// <summary>The chart as an SVG document; <paramref name="engines"/> says what Auto resolved to.</summary>
    public static XDocument Build(IReadOnlyList<RowResult> rows, string title, string engines)
    {
        // Labels are right-aligned against the bars; about 6.3 px per character at 11 px sans-serif.
        int labelWidth = (int)Math.Max(200, rows.Select(r => r.Name.Length).DefaultIfEmpty(10).Max() * 6.3 + 16);
        // The scale ends just past the longest bar (at least past the 1.00 line), so no half of the canvas stays empty.
        double longest = rows.Select(r => r.Ratio).Where(double.IsFinite).DefaultIfEmpty(1).Max();
        double max = Math.Clamp(longest * 1.05, 1.1, 4.0);
        int height = Top + rows.Count * RowHeight + 36;
        int width = labelWidth + BarArea + ValueColumn + 16;
        XElement svg = Canvas(width, height, 11);
        svg.Add(
            Text(8, 18, title, size: 14, bold: true),
            Text(8, 34, "Each bar: Spindle Auto (what a user gets without configuring an engine) time / System.IO time; shorter is faster."),
            Text(8, 48, $"Green: meets its target (1.00; 0.50 for async FileStream and RandomAccess rows). Red: misses it. {engines}."));
        for (int i = 0; i < rows.Count; i++)
        {
            RowResult row = rows[i];
            int y = Top + i * RowHeight;
            svg.Add(Text(labelWidth - 6, y + 13, row.Name, anchor: "end"));
            if (!double.IsFinite(row.Ratio))
            {
                svg.Add(Text(labelWidth + 4, y + 13, row.Skipped ?? "n/a", fill: "gray"));
                continue;
            }
            double target = row.IsAsync && row.Group is "FileStream" or "RandomAccess" ? 0.5 : 1.0;
            double barWidth = Math.Max(1, Math.Min(row.Ratio, max) / max * BarArea);
            svg.Add(new XElement(Svg + "rect",
                new XAttribute("x", labelWidth), new XAttribute("y", y + 3), new XAttribute("width", F(barWidth)), new XAttribute("height", RowHeight - 5),
                new XAttribute("fill", row.Ratio <= target ? "#3a9d5d" : "#d0534a"),
                new XElement(Svg + "title", $"{row.Name}: Spindle Auto / System.IO = {row.Ratio.ToString("0.00", CultureInfo.InvariantCulture)}")));
            svg.Add(Text(labelWidth + BarArea + ValueColumn, y + 13, row.Ratio.ToString("0.00", CultureInfo.InvariantCulture) + (row.Ratio > max ? " ▸" : ""), anchor: "end"));
        }
        foreach (double mark in new[] { 0.5, 1.0 })
        {
            double x = labelWidth + mark / max * BarArea;
            svg.Add(Line(x, Top - 2, x, height - 30, "black", dash: "4 3"));
            svg.Add(Text(x, height - 16, mark.ToString("0.00", CultureInfo.InvariantCulture), anchor: "middle"));
        }
        return new XDocument(svg);
    }

    private static string F(double value) => Number(value);
}
