using System.Text;
using System.Xml;
using System.Xml.Linq;

namespace Spindle.Tool.Reports;

/// <summary>Saves SVG documents as browsers and Markdown viewers expect them: UTF-8 without a byte-order mark, indented.</summary>
public static class SvgFile
{
    /// <summary>Writes <paramref name="document"/> to <paramref name="path"/>.</summary>
    public static void Save(XDocument document, string path)
    {
        var settings = new XmlWriterSettings { Encoding = new UTF8Encoding(false), Indent = true };
        using XmlWriter writer = XmlWriter.Create(path, settings);
        document.Save(writer);
    }
}
