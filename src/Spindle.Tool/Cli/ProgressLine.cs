using System.Diagnostics;

namespace Spindle.Tool.Cli;

/// <summary>
/// Progress of a command on standard error. On a terminal: one line that rewrites itself with a carriage
/// return (a bar, a percentage, i of n and what runs now), cleared when the work ends. Redirected to a
/// file or a pipe: plain lines, one at each 10 % step and otherwise at most one every few seconds, so a
/// log gets a handful of readable lines instead of a redraw per update.
/// </summary>
public sealed class ProgressLine
{
    /// <summary>How often a redirected progress may print a line between two 10 % steps.</summary>
    public static readonly TimeSpan DefaultInterval = TimeSpan.FromSeconds(5);

    private const int BarWidth = 24;
    private readonly TextWriter _writer;
    private readonly bool _redraw;          // true on a terminal: carriage-return redraws
    private readonly TimeSpan _interval;    // plain mode: the least time between two lines within a 10 % step
    private int _lastLength;                // redraw mode: characters written by the previous update, blanked by the next
    private int _lastStep = -1;             // plain mode: the 10 % step of the last line printed, -1 before the first
    private long _lastLineTimestamp;        // plain mode: when the last line was printed
    private string? _lastText;              // plain mode: the last line printed, never printed twice in a row

    /// <summary>Progress on <paramref name="writer"/>; <paramref name="redraw"/> when it is a terminal.</summary>
    public ProgressLine(TextWriter writer, bool redraw = true, TimeSpan? interval = null)
    {
        _writer = writer;
        _redraw = redraw;
        _interval = interval ?? DefaultInterval;
    }

    /// <summary>Shows step <paramref name="current"/> of <paramref name="total"/> with a label.</summary>
    public void Report(long current, long total, string label)
    {
        double fraction = total <= 0 ? 1 : Math.Clamp((double)current / total, 0, 1);
        if (_redraw)
        {
            int filled = (int)Math.Round(fraction * BarWidth);
            Redraw($"[{new string('#', filled)}{new string('.', BarWidth - filled)}] {fraction * 100,3:0}% {label}");
            return;
        }
        int step = (int)Math.Floor(fraction * 10);
        if (step > _lastStep || Stopwatch.GetElapsedTime(_lastLineTimestamp) >= _interval)
        {
            _lastStep = Math.Max(step, _lastStep);
            PrintLine($"{fraction * 100:0}% {label}");
        }
    }

    /// <summary>Shows a free-form status.</summary>
    public void Write(string text)
    {
        if (_redraw)
        {
            Redraw(text);
        }
        else
        {
            PrintLine(text);
        }
    }

    /// <summary>Blanks the redrawn line; a redirected progress leaves its lines.</summary>
    public void Clear()
    {
        if (_redraw && _lastLength > 0)
        {
            _writer.Write("\r" + new string(' ', _lastLength) + "\r");
            _writer.Flush();
            _lastLength = 0;
        }
    }

    private void Redraw(string text)
    {
        int pad = Math.Max(0, _lastLength - text.Length);
        _writer.Write("\r" + text + new string(' ', pad));
        _writer.Flush();
        _lastLength = text.Length;
    }

    private void PrintLine(string text)
    {
        if (text == _lastText)
        {
            return;
        }
        _writer.WriteLine(text);
        _writer.Flush();
        _lastText = text;
        _lastLineTimestamp = Stopwatch.GetTimestamp();
    }
}
