using System.Diagnostics;
using Spindle.Workloads;

namespace Spindle.Tool.Bench;

/// <summary>Times a row's <see cref="ReferenceCommand"/>: one warm-up run, then the median of three.</summary>
public static class ReferenceRunner
{
    /// <summary>The figure, or null when the program is not on PATH; throws <see cref="InvalidOperationException"/> when it fails.</summary>
    public static async Task<FioResult?> RunAsync(ReferenceCommand command, CancellationToken cancellation)
    {
        string? program = ProgramPath.Find(command.Program);
        if (program is null)
        {
            return null;
        }
        var times = new List<double>();
        for (int i = 0; i < 4; i++)
        {
            cancellation.ThrowIfCancellationRequested();
            var start = new ProcessStartInfo(program) { UseShellExecute = false, RedirectStandardError = true };
            foreach (string argument in command.Arguments)
            {
                start.ArgumentList.Add(argument);
            }
            long t0 = Stopwatch.GetTimestamp();
            using Process process = Process.Start(start) ?? throw new InvalidOperationException($"{command.Program} did not start");
            string errors = await process.StandardError.ReadToEndAsync(cancellation).ConfigureAwait(false);
            await process.WaitForExitAsync(cancellation).ConfigureAwait(false);
            double seconds = Stopwatch.GetElapsedTime(t0).TotalSeconds;
            if (process.ExitCode != 0)
            {
                throw new InvalidOperationException($"{command.Program}: {errors.Trim()}");
            }
            if (i > 0)
            {
                times.Add(seconds);
            }
        }
        times.Sort();
        double median = times[times.Count / 2];
        return new FioResult(command.CommandLine, 1 / median, command.Bytes / median);
    }
}
