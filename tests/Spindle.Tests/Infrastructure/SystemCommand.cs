using System.Diagnostics;

namespace Spindle.Tests.Infrastructure;

/// <summary>Runs a system program (mount, umount, bindfs …) for a test fixture: its exit code and what it printed, or -1 and why it could not start.</summary>
public static class SystemCommand
{
    public static (int Code, string Output) Run(string file, string arguments)
    {
        try
        {
            var start = new ProcessStartInfo(file, arguments) { RedirectStandardError = true, RedirectStandardOutput = true };
            using Process process = Process.Start(start)!;
            string output = process.StandardOutput.ReadToEnd() + process.StandardError.ReadToEnd();
            process.WaitForExit(30_000);
            return (process.ExitCode, output);
        }
        catch (System.ComponentModel.Win32Exception e)
        {
            return (-1, e.Message);
        }
    }
}
