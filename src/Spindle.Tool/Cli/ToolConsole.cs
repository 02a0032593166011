namespace Spindle.Tool.Cli;

/// <summary>
/// Where a command writes and what stops it: the process console and Ctrl-C in <see cref="Program.Main"/>,
/// string writers and a token in tests.
/// </summary>
/// <param name="Out">Results: tables, recommendations, final lines.</param>
/// <param name="Error">Progress lines and one-line errors.</param>
/// <param name="Cancellation">Set by Ctrl-C; commands stop between measurements and clean up.</param>
public sealed record ToolConsole(TextWriter Out, TextWriter Error, CancellationToken Cancellation);
