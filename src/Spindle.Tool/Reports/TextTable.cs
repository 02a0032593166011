namespace Spindle.Tool.Reports;

/// <summary>A table of text cells, printed with padded columns for the console or as Markdown.</summary>
public sealed class TextTable(IReadOnlyList<string> headers, IReadOnlyList<bool> rightAligned)
{
    private readonly List<string[]> _rows = new();

    /// <summary>How many rows the table has.</summary>
    public int Count => _rows.Count;

    /// <summary>Adds a row with one cell per header.</summary>
    public void Add(params string[] cells) => _rows.Add(cells);

    /// <summary>The table with columns padded to their widest cell.</summary>
    public string ToConsole()
    {
        int[] widths = headers.Select((h, i) => Math.Max(h.Length, _rows.Count == 0 ? 0 : _rows.Max(r => r[i].Length))).ToArray();
        var text = new System.Text.StringBuilder();
        Line(text, headers, widths);
        text.AppendLine(string.Join("  ", widths.Select(w => new string('-', w))));
        foreach (string[] row in _rows)
        {
            Line(text, row, widths);
        }
        return text.ToString();
    }

    /// <summary>The table as GitHub Markdown.</summary>
    public string ToMarkdown()
    {
        var text = new System.Text.StringBuilder();
        text.AppendLine("| " + string.Join(" | ", headers) + " |");
        text.AppendLine("|" + string.Join("|", rightAligned.Select(r => r ? " ---: " : " --- ")) + "|");
        foreach (string[] row in _rows)
        {
            text.AppendLine("| " + string.Join(" | ", row.Select(c => c.Replace("|", "\\|", StringComparison.Ordinal))) + " |");
        }
        return text.ToString();
    }

    private void Line(System.Text.StringBuilder text, IReadOnlyList<string> cells, int[] widths)
    {
        for (int i = 0; i < cells.Count; i++)
        {
            text.Append(rightAligned[i] ? cells[i].PadLeft(widths[i]) : cells[i].PadRight(widths[i]));
            text.Append(i + 1 < cells.Count ? "  " : "");
        }
        // The last column is left-aligned text: no trailing blanks.
        int end = text.Length;
        while (end > 0 && text[end - 1] == ' ')
        {
            end--;
        }
        text.Length = end;
        text.AppendLine();
    }
}
