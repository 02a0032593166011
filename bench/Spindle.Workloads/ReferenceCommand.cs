namespace Spindle.Workloads;

/// <summary>
/// A system command that does a row's whole operation, timed as the row's outside reference where
/// fio has no job (e.g. <c>cp</c> for a file copy).
/// </summary>
/// <param name="Program">The program, looked up on PATH.</param>
/// <param name="Arguments">Its arguments.</param>
/// <param name="Bytes">The bytes one run moves, for its bandwidth.</param>
public sealed record ReferenceCommand(string Program, IReadOnlyList<string> Arguments, long Bytes)
{
    /// <summary>The command as a person would type it.</summary>
    public string CommandLine => Program + " " + string.Join(' ', Arguments);
}
