using System.Diagnostics;
using System.Text.Json;
using Spindle.Benchmarks.Workloads;

namespace Spindle.Tool.Bench;

/// <summary>Runs fio for a row's <see cref="FioJob"/> and reads its JSON output; fio is optional.</summary>
public static class FioRunner
{
    /// <summary>What the fio column says when fio is not on PATH.</summary>
    public const string NotInstalled = "n/a (fio not installed)";

    /// <summary>The path of fio on PATH, or null.</summary>
    public static string? Locate()
    {
        foreach (string dir in (Environment.GetEnvironmentVariable("PATH") ?? "").Split(':', StringSplitOptions.RemoveEmptyEntries))
        {
            string candidate = Path.Combine(dir, "fio");
            if (File.Exists(candidate))
            {
                return candidate;
            }
        }
        return null;
    }

    /// <summary>Runs the job; returns the figure or throws <see cref="InvalidOperationException"/> with fio's complaint.</summary>
    public static async Task<FioResult> RunAsync(string fio, FioJob job, int seconds, CancellationToken cancellation)
    {
        var start = new ProcessStartInfo(fio)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (string argument in job.Arguments(seconds))
        {
            start.ArgumentList.Add(argument);
        }
        using Process process = Process.Start(start) ?? throw new InvalidOperationException("fio did not start");
        Task<string> output = process.StandardOutput.ReadToEndAsync(cancellation);
        Task<string> errors = process.StandardError.ReadToEndAsync(cancellation);
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellation);
        timeout.CancelAfter(TimeSpan.FromSeconds(seconds + 60));
        try
        {
            await process.WaitForExitAsync(timeout.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            throw;
        }
        string json = await output.ConfigureAwait(false);
        if (process.ExitCode != 0)
        {
            string message = (await errors.ConfigureAwait(false)).Split('\n', StringSplitOptions.RemoveEmptyEntries).FirstOrDefault() ?? $"exit code {process.ExitCode}";
            throw new InvalidOperationException(message.Trim());
        }
        return Parse(json, job.CommandLine(seconds), job.ReadWrite.Contains("write", StringComparison.Ordinal) ? "write" : "read");
    }

    /// <summary>Reads iops and bandwidth of the first job from fio's JSON output.</summary>
    public static FioResult Parse(string json, string command, string side)
    {
        // fio may print notices before the JSON document.
        int begin = json.IndexOf('{', StringComparison.Ordinal);
        using JsonDocument document = JsonDocument.Parse(begin > 0 ? json[begin..] : json);
        JsonElement figures = document.RootElement.GetProperty("jobs")[0].GetProperty(side);
        return new FioResult(command, figures.GetProperty("iops").GetDouble(), figures.GetProperty("bw_bytes").GetDouble());
    }
}
