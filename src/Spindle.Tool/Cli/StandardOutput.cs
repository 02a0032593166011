using System.Text;

namespace Spindle.Tool.Cli;

/// <summary>
/// Standard output as the commands see it: a failed write (a full device such as <c>/dev/full</c>, a closed
/// pipe) becomes a <see cref="ToolException"/> that says it was standard output, so the command ends with one
/// line on standard error and exit code 1 instead of a stack trace, and no write error is taken for the disk's.
/// </summary>
public sealed class StandardOutput(TextWriter inner) : TextWriter
{
    /// <inheritdoc />
    public override Encoding Encoding => inner.Encoding;

    /// <inheritdoc />
    public override void Write(char value) => Guard(() => inner.Write(value));

    /// <inheritdoc />
    public override void Write(string? value) => Guard(() => inner.Write(value));

    /// <inheritdoc />
    public override void Write(char[] buffer, int index, int count) => Guard(() => inner.Write(buffer, index, count));

    /// <inheritdoc />
    public override void WriteLine(string? value) => Guard(() => inner.WriteLine(value));

    /// <inheritdoc />
    public override void WriteLine() => Guard(inner.WriteLine);

    /// <inheritdoc />
    public override void Flush() => Guard(inner.Flush);

    private static void Guard(Action write)
    {
        try
        {
            write();
        }
        catch (IOException e)
        {
            throw new ToolException($"cannot write to standard output: {e.Message}");
        }
    }
}
