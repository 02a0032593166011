using System.Globalization;
using System.Xml.Linq;
using Spindle.Workloads;

namespace Spindle.Tool.Tune;

/// <summary>
/// <c>tune-heatmap.svg</c>: for writing and for reading, a grid of buffer size (rows) × block size
/// (columns); each cell is the best time over the options, green for the fastest, red for slow.
/// </summary>
public static class HeatMap
{
    private static readonly XNamespace Svg = "http://www.w3.org/2000/svg";
    private const int Cell = 56;
    private const int CellHeight = 28;
    private const int Left = 70;
    private const int Top = 60;

    /// <summary>The heat maps of a sweep as one SVG document.</summary>
    public static XDocument Build(IReadOnlyList<TuneMeasurement> results, TuneGrid grid, string title)
    {
        int panelWidth = Math.Max(Left + grid.Blocks.Count * Cell + 30, 440);   // wide enough for the panel title
        int height = Top + grid.Buffers.Count * CellHeight + 50;
        var svg = new XElement(Svg + "svg",
            new XAttribute("width", panelWidth * 2), new XAttribute("height", height), new XAttribute("font-family", "sans-serif"), new XAttribute("font-size", 10),
            new XElement(Svg + "rect", new XAttribute("width", panelWidth * 2), new XAttribute("height", height), new XAttribute("fill", "white")),
            new XElement(Svg + "text", new XAttribute("x", 8), new XAttribute("y", 16), new XAttribute("font-size", 13), new XAttribute("font-weight", "bold"), title));
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
                    new XElement(Svg + "title", $"buffer {Units.Bytes(m.Buffer)}, block {Units.Bytes(m.Block)}, {m.Option.Name}: {ms:0.0} ms")));
                svg.Add(Text(x + Cell / 2 - 1, y + CellHeight / 2 + 3, string.Create(CultureInfo.InvariantCulture, $"{ms:0.#}{(m.Extrapolated ? "~" : "")}"), anchor: "middle"));
            }
        }
        svg.Add(Text(x0 + Left, Top + grid.Buffers.Count * CellHeight + 18, "cell: milliseconds per pass over the file (~ extrapolated)"));
    }

    private static XElement Text(int x, int y, string text, bool bold = false, string anchor = "start") =>
        new(Svg + "text", new XAttribute("x", x), new XAttribute("y", y), new XAttribute("text-anchor", anchor),
            new XAttribute("font-weight", bold ? "bold" : "normal"), text);

    private static string Color(double t)
    {
        t = Math.Clamp(t, 0, 1);
        // Green (fast) through yellow to red (slow).
        int red = (int)(t < 0.5 ? 90 + 330 * t : 255);
        int green = (int)(t < 0.5 ? 190 : 190 - 240 * (t - 0.5));
        return $"#{red:x2}{Math.Max(green, 60):x2}60";
    }
}
