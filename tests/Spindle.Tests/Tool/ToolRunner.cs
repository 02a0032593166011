using Spindle.Tool;
using Spindle.Tool.Cli;

namespace Spindle.Tests.Tool;

/// <summary>Runs the spindle tool in-process through its entry point, capturing what it prints.</summary>
internal static class ToolRunner
{
    public sealed record Result(int ExitCode, string Out, string Error);

    public static Result Run(params string[] args) => Run(CancellationToken.None, args);

    public static Result Run(CancellationToken cancellation, params string[] args)
    {
        var output = new StringWriter();
        var error = new StringWriter();
        int code = Program.Run(args, new ToolConsole(output, error, cancellation));
        return new Result(code, output.ToString(), error.ToString());
    }

    /// <summary>The last line of the error output after progress lines (which end in carriage returns).</summary>
    public static string LastErrorLine(this Result result) =>
        result.Error.Split('\n', StringSplitOptions.RemoveEmptyEntries).Last().Split('\r').Last().Trim();
}
