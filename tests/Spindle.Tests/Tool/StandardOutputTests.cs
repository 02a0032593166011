using System.Diagnostics;

namespace Spindle.Tests.Tool;

/// <summary>The tool when standard output cannot be written, and version arguments.</summary>
public class StandardOutputTests
{
    // The tool with standard output on /dev/full (every write fails with ENOSPC), as `spindle --help > /dev/full`.
    private static (int ExitCode, string Error) RunToDevFull(params string[] args)
    {
        var start = new ProcessStartInfo("/bin/sh") { RedirectStandardError = true };
        start.ArgumentList.Add("-c");
        start.ArgumentList.Add("exec \"$@\" > /dev/full");
        start.ArgumentList.Add("sh");
        start.ArgumentList.Add(Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") ?? "dotnet");
        start.ArgumentList.Add(Path.Combine(AppContext.BaseDirectory, "Spindle.Tool.dll"));
        foreach (string arg in args)
        {
            start.ArgumentList.Add(arg);
        }
        using Process process = Process.Start(start)!;
        string error = process.StandardError.ReadToEnd();
        Assert.True(process.WaitForExit(60_000));
        return (process.ExitCode, error);
    }

    [Theory]
    [InlineData("spindle", "--help")]
    [InlineData("spindle", "--version")]
    [InlineData("spindle bench", "bench", "--list")]
    [InlineData("spindle copy", "copy", "--help")]
    public void A_failed_write_to_standard_output_is_one_line_and_exit_code_1(string prefix, params string[] args)
    {
        (int exitCode, string error) = RunToDevFull(args);

        Assert.Equal(1, exitCode);
        Assert.Single(error.Trim().Split('\n'));
        Assert.StartsWith($"{prefix}: cannot write to standard output: ", error.Trim());
        Assert.DoesNotContain("   at ", error);
    }

    [Fact]
    public void Version_takes_no_arguments()
    {
        ToolRunner.Result version = ToolRunner.Run("--version");
        Assert.Equal(0, version.ExitCode);
        Assert.StartsWith("spindle 0.1.0", version.Out);

        ToolRunner.Result extra = ToolRunner.Run("--version", "extra");
        Assert.Equal(2, extra.ExitCode);
        Assert.Equal("", extra.Out);
        Assert.Equal("spindle: --version takes no arguments, got 'extra' (spindle --help for usage)", extra.Error.Trim());
    }
}
