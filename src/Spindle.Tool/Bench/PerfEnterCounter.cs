using System.Diagnostics;
using System.Globalization;
using Spindle.Workloads;

namespace Spindle.Tool.Bench;

/// <summary>
/// Counts the <c>io_uring_enter</c> calls of a program (fio) with <c>perf stat</c> on the kernel's syscall
/// tracepoint: the kernel counts each entry, so nothing stops the program as <c>strace</c> would, and its figures
/// stay those of a plain run. fio's JSON has no count of its own: its <c>iodepth_submit</c> is a histogram.
/// </summary>
public sealed class PerfEnterCounter
{
    /// <summary>The tracepoint counted.</summary>
    public const string Event = "syscalls:sys_enter_io_uring_enter";

    /// <summary>What the report says when fio's enters cannot be counted.</summary>
    public const string Unavailable = "fio's io_uring_enter calls are counted with perf, which is not installed or cannot read syscall tracepoints here "
        + "(install it with `apt-get install linux-perf` on Debian, `apt-get install linux-tools-$(uname -r)` on Ubuntu, `dnf install perf` on Fedora; counting needs root)";

    private PerfEnterCounter(string perf) => Perf = perf;

    /// <summary>The perf program.</summary>
    public string Perf { get; }

    /// <summary>perf on the search path when it can count the tracepoint here (tried once on <c>true</c>), else null.</summary>
    public static PerfEnterCounter? Locate(string? searchPath = null)
    {
        if (ProgramPath.Find("perf", searchPath) is not { } perf || ProgramPath.Find("true", searchPath) is not { } program)
        {
            return null;
        }
        string output = Path.GetTempFileName();
        try
        {
            var start = new ProcessStartInfo(perf) { UseShellExecute = false, RedirectStandardError = true, RedirectStandardOutput = true };
            foreach (string argument in Arguments(output))
            {
                start.ArgumentList.Add(argument);
            }
            start.ArgumentList.Add(program);
            using Process process = Process.Start(start)!;
            process.StandardOutput.ReadToEnd();
            process.StandardError.ReadToEnd();
            process.WaitForExit();
            return process.ExitCode == 0 && Parse(File.ReadAllText(output)) >= 0 ? new PerfEnterCounter(perf) : null;
        }
        catch (System.ComponentModel.Win32Exception)
        {
            return null;
        }
        finally
        {
            File.Delete(output);
        }
    }

    /// <summary><c>perf stat</c>'s arguments before the counted command's: CSV output into <paramref name="outputFile"/>.</summary>
    public static IReadOnlyList<string> Arguments(string outputFile) => ["stat", "-x,", "-e", Event, "-o", outputFile, "--"];

    /// <summary>The count from perf's CSV output (<c>13204,,syscalls:sys_enter_io_uring_enter,…</c>), or -1 when it has none.</summary>
    public static long Parse(string output)
    {
        foreach (string line in output.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            string[] fields = line.Split(',');
            if (!line.StartsWith('#') && fields.Length > 2 && fields[2] == Event)
            {
                return long.TryParse(fields[0], NumberStyles.None, CultureInfo.InvariantCulture, out long count) ? count : -1;
            }
        }
        return -1;
    }
}
