using System.Globalization;
using System.Xml.Linq;
using Spindle.Tool.Reports;
using Spindle.Workloads;

namespace Spindle.Tool.Tune;

/// <summary>
/// <c>tune-heatmap.svg</c>: for writing and for reading, a grid of buffer size (rows) × block size
/// (columns); each cell shows the best time over the options (milliseconds, one decimal everywhere) and
/// under it the option that gave it, green for the fastest, red for slow.
/// </summary>
public static class HeatMap
{
    private static readonly XNamespace Svg = SvgShapes.Svg;
    private const int Cell = 62;
    private const int CellHeight = 34;
    private const int Left = 70;
    private const int Top = 60;

    /// <summary>The heat maps of a sweep as one SVG document.</summary>
    public static XDocument Build(IReadOnlyList<TuneMeasurement> results, TuneGrid grid, string title)
    {
        int panelWidth = Math.Max(Left + grid.Blocks.Count * Cell + 30, 480);   // wide enough for the panel title and legend
        int height = Top + grid.Buffers.Count * CellHeight + 46;
        XElement svg = SvgShapes.Canvas(panelWidth * 2, height, 10);
        svg.Add(SvgShapes.Text(8, 16, title, size: 13, bold: true));
        Direction[] directions = [Direction.Write, Direction.Read];
        for (int p = 0; p < directions.Length; p++)
        {
            AddPanel(svg, p * panelWidth, directions[p], results.Where(r => r.Direction == directions[p]).ToList(), grid);
        }
        return new XDocument(svg);
    }

    private static void AddPanel(XElement svg, int x0, Direction direction, List<TuneMeasurement> results, TuneGrid grid)
    {
        svg.Add(Text(x0 + Left, 36, $"{direction}: best time over the options (block →, buffer ↓)", bold: true));
        var best = new Dictionary<(int, int), TuneMeasurement>();
        foreach (TuneMeasurement m in results)
        {
            if (!best.TryGetValue((m.Buffer, m.Block), out TuneMeasurement? current) || m.Time < current.Time)
            {
                best[(m.Buffer, m.Block)] = m;
            }
        }
        double fastest = best.Count == 0 ? 1 : best.Values.Min(m => m.Time.TotalMilliseconds);
        double slowest = best.Count == 0 ? 1 : best.Values.Max(m => m.Time.TotalMilliseconds);
        // One unit and one format per panel: milliseconds, or microseconds when even the fastest cell takes less than 1 ms.
        (string unit, double perMillisecond) = fastest >= 1 ? ("ms", 1.0) : ("µs", 1000.0);
        for (int c = 0; c < grid.Blocks.Count; c++)
        {
            svg.Add(Text(x0 + Left + c * Cell + Cell / 2, Top - 6, Units.Bytes(grid.Blocks[c]), anchor: "middle"));
        }
        for (int r = 0; r < grid.Buffers.Count; r++)
        {
            int y = Top + r * CellHeight;
            svg.Add(Text(x0 + Left - 6, y + CellHeight / 2 + 4, Units.Bytes(grid.Buffers[r]), anchor: "end"));
            for (int c = 0; c < grid.Blocks.Count; c++)
            {
                int x = x0 + Left + c * Cell;
                if (!best.TryGetValue((grid.Buffers[r], grid.Blocks[c]), out TuneMeasurement? m))
                {
                    svg.Add(new XElement(Svg + "rect", new XAttribute("x", x), new XAttribute("y", y), new XAttribute("width", Cell - 2), new XAttribute("height", CellHeight - 2), new XAttribute("fill", "#eeeeee")));
                    continue;
                }
                double ms = m.Time.TotalMilliseconds;
                // Position on a log scale between the fastest and slowest cell: 0 green, 1 red.
                double t = slowest > fastest ? Math.Log(ms / fastest) / Math.Log(slowest / fastest) : 0;
                svg.Add(new XElement(Svg + "rect", new XAttribute("x", x), new XAttribute("y", y), new XAttribute("width", Cell - 2), new XAttribute("height", CellHeight - 2),
                    new XAttribute("fill", Color(t)),
                    new XElement(Svg + "title", $"buffer {Units.Bytes(m.Buffer)}, block {Units.Bytes(m.Block)}, {m.Option.Name}: {Format(m, perMillisecond)} {unit}")));
                svg.Add(Text(x + Cell / 2 - 1, y + 14, Format(m, perMillisecond), anchor: "middle"));
                svg.Add(Text(x + Cell / 2 - 1, y + 27, ShortName(m.Option), anchor: "middle", size: 9));
            }
        }
        string unitName = unit == "ms" ? "milliseconds" : "microseconds";
        svg.Add(Text(x0 + Left, Top + grid.Buffers.Count * CellHeight + 18, $"each cell: {unitName} per pass over the file (~ extrapolated)"));
        svg.Add(Text(x0 + Left, Top + grid.Buffers.Count * CellHeight + 32, "and the fastest option (SeqScan = SequentialScan, WriteThr = WriteThrough)"));
    }

    private static XElement Text(int x, int y, string text, bool bold = false, string anchor = "start", int size = 0) =>
        SvgShapes.Text(x, y, text, anchor, size, bold);

    // One format for every time of a panel: one decimal in the panel's unit, ~ when extrapolated from a capped pass.
    private static string Format(TuneMeasurement m, double perMillisecond) =>
        string.Create(CultureInfo.InvariantCulture, $"{(m.Extrapolated ? "~" : "")}{m.Time.TotalMilliseconds * perMillisecond:#,0.0}");

    private static string ShortName(TuneOption option) => option.Name switch
    {
        "SequentialScan" => "SeqScan",
        "WriteThrough" => "WriteThr",
        _ => option.Name,
    };

    private static string Color(double t)
    {
        t = Math.Clamp(t, 0, 1);
        // Green (fast) through yellow to red (slow).
        int red = (int)(t < 0.5 ? 90 + 330 * t : 255);
        int green = (int)(t < 0.5 ? 190 : 190 - 240 * (t - 0.5));
        return $"#{red:x2}{Math.Max(green, 60):x2}60";
    }
}
