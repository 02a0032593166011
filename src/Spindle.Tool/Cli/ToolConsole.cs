namespace Spindle.Tool.Cli;

/// <summary>
/// Where a command writes and what stops it: the process console and its signals in <see cref="Program.Main"/>,
/// string writers and a token in tests.
/// </summary>
/// <param name="Out">Results: tables, recommendations, final lines.</param>
/// <param name="Error">Progress lines and one-line errors.</param>
/// <param name="Cancellation">Set by Ctrl-C or SIGTERM; commands stop between measurements and clean up.</param>
public sealed record ToolConsole(TextWriter Out, TextWriter Error, CancellationToken Cancellation)
{
    /// <summary>True when <see cref="Error"/> is a terminal: progress redraws one line; otherwise it prints plain lines.</summary>
    public bool ErrorIsTerminal { get; init; }

    /// <summary>The exit code of a cancelled command: 128 + the signal that stopped it (130 for Ctrl-C, 143 for SIGTERM).</summary>
    public Func<int> CancelledExitCode { get; init; } = static () => Program.Cancelled;

    /// <summary>What stopped the command, for its last line ("Ctrl-C", "SIGTERM").</summary>
    public Func<string> CancelledBy { get; init; } = static () => "Ctrl-C";

    /// <summary>A progress display on <see cref="Error"/> suited to what it is.</summary>
    public ProgressLine Progress() => new(Error, ErrorIsTerminal);
}
