using System.Globalization;
using System.Xml.Linq;

namespace Spindle.Tool.Reports;

/// <summary>The SVG elements the charts are drawn with, numbers written the same way in every chart.</summary>
public static class SvgShapes
{
    /// <summary>The SVG namespace.</summary>
    public static readonly XNamespace Svg = "http://www.w3.org/2000/svg";

    /// <summary>A text; attributes at their SVG defaults are left out.</summary>
    public static XElement Text(double x, double y, string text, string anchor = "start", int size = 0, bool bold = false, string? fill = null)
    {
        var element = new XElement(Svg + "text", new XAttribute("x", Number(x)), new XAttribute("y", Number(y)), text);
        if (anchor != "start")
        {
            element.Add(new XAttribute("text-anchor", anchor));
        }
        if (size > 0)
        {
            element.Add(new XAttribute("font-size", size));
        }
        if (bold)
        {
            element.Add(new XAttribute("font-weight", "bold"));
        }
        if (fill is not null)
        {
            element.Add(new XAttribute("fill", fill));
        }
        return element;
    }

    /// <summary>A straight line; <paramref name="dash"/> is a stroke-dasharray or null for a solid line.</summary>
    public static XElement Line(double x1, double y1, double x2, double y2, string color, double width = 1, string? dash = null)
    {
        var line = new XElement(Svg + "line", new XAttribute("x1", Number(x1)), new XAttribute("y1", Number(y1)),
            new XAttribute("x2", Number(x2)), new XAttribute("y2", Number(y2)), new XAttribute("stroke", color), new XAttribute("stroke-width", Number(width)));
        if (dash is not null)
        {
            line.Add(new XAttribute("stroke-dasharray", dash));
        }
        return line;
    }

    /// <summary>A white canvas of the given size with the common font.</summary>
    public static XElement Canvas(int width, int height, int fontSize) =>
        new(Svg + "svg",
            new XAttribute("width", width), new XAttribute("height", height), new XAttribute("viewBox", $"0 0 {width} {height}"),
            new XAttribute("font-family", "sans-serif"), new XAttribute("font-size", fontSize),
            new XElement(Svg + "rect", new XAttribute("width", width), new XAttribute("height", height), new XAttribute("fill", "white")));

    /// <summary>A coordinate with at most one decimal.</summary>
    public static string Number(double value) => value.ToString("0.#", CultureInfo.InvariantCulture);
}
