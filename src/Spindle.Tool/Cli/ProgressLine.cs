namespace Spindle.Tool.Cli;

/// <summary>
/// One line of progress that rewrites itself with a carriage return: a bar, a percentage, i of n and
/// what runs now. Cleared when the work ends so the results start on a clean line.
/// </summary>
public sealed class ProgressLine(TextWriter writer)
{
    private const int BarWidth = 24;
    private int _lastLength; // characters written by the previous update, blanked by the next

    /// <summary>Shows step <paramref name="current"/> of <paramref name="total"/> with a label.</summary>
    public void Report(long current, long total, string label)
    {
        double fraction = total <= 0 ? 1 : Math.Clamp((double)current / total, 0, 1);
        int filled = (int)Math.Round(fraction * BarWidth);
        string text = $"[{new string('#', filled)}{new string('.', BarWidth - filled)}] {fraction * 100,3:0}% {label}";
        Write(text);
    }

    /// <summary>Shows a free-form status.</summary>
    public void Write(string text)
    {
        int pad = Math.Max(0, _lastLength - text.Length);
        writer.Write("\r" + text + new string(' ', pad));
        writer.Flush();
        _lastLength = text.Length;
    }

    /// <summary>Blanks the line.</summary>
    public void Clear()
    {
        if (_lastLength > 0)
        {
            writer.Write("\r" + new string(' ', _lastLength) + "\r");
            writer.Flush();
            _lastLength = 0;
        }
    }
}
