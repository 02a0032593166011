using System.Diagnostics;
using System.Text.Json;
using Spindle.Workloads;

namespace Spindle.Tool.Bench;

/// <summary>Runs fio for a row's <see cref="FioJob"/> and reads its JSON output; fio is optional.</summary>
public static class FioRunner
{
    /// <summary>What the fio column says when fio is not on PATH.</summary>
    public const string NotInstalled = "n/a (fio not installed: apt-get install fio)";

    /// <summary>What the reports say, once, when fio is not on PATH: why the fio figures are missing and how to get them.</summary>
    public const string InstallHint = "fio is not installed, so the fio figures (the physical limit each row is compared with) are missing. "
        + "Install it with `apt-get install fio` (Debian, Ubuntu), `dnf install fio` (Fedora) or `apk add fio` (Alpine), then run `spindle bench` again.";

    /// <summary>The path of fio on <paramref name="searchPath"/> (this process's PATH when null), or null.</summary>
    public static string? Locate(string? searchPath = null) => ProgramPath.Find("fio", searchPath);

    /// <summary>
    /// Runs the job; returns the figure or throws <see cref="InvalidOperationException"/> with fio's complaint. With
    /// <paramref name="enters"/>, an io_uring job runs under <c>perf stat</c>, which counts its <c>io_uring_enter</c> calls.
    /// </summary>
    public static async Task<FioResult> RunAsync(string fio, FioJob job, TimeSpan runtime, CancellationToken cancellation, PerfEnterCounter? enters = null)
    {
        string? perfOutput = enters is not null && job.IoEngine == "io_uring" ? Path.GetTempFileName() : null;
        try
        {
            FioResult result = await RunAsync(fio, job, runtime, perfOutput is null ? null : (enters!.Perf, perfOutput), cancellation).ConfigureAwait(false);
            long calls = perfOutput is null ? -1 : PerfEnterCounter.Parse(await File.ReadAllTextAsync(perfOutput, cancellation).ConfigureAwait(false));
            return calls >= 0 && result.Operations > 0 ? result with { RingEntersPerOperation = calls / result.Operations } : result;
        }
        finally
        {
            if (perfOutput is not null)
            {
                File.Delete(perfOutput);
            }
        }
    }

    private static async Task<FioResult> RunAsync(string fio, FioJob job, TimeSpan runtime, (string Program, string Output)? perf, CancellationToken cancellation)
    {
        var start = new ProcessStartInfo(perf?.Program ?? fio)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        if (perf is { } counter)
        {
            foreach (string argument in PerfEnterCounter.Arguments(counter.Output))
            {
                start.ArgumentList.Add(argument);
            }
            start.ArgumentList.Add(fio);
        }
        foreach (string argument in job.Arguments(runtime))
        {
            start.ArgumentList.Add(argument);
        }
        using Process process = Process.Start(start) ?? throw new InvalidOperationException("fio did not start");
        Task<string> output = process.StandardOutput.ReadToEndAsync(cancellation);
        Task<string> errors = process.StandardError.ReadToEndAsync(cancellation);
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellation);
        timeout.CancelAfter(runtime + TimeSpan.FromSeconds(60));
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
        return Parse(json, job.CommandLine(runtime), job.ReadWrite.Contains("write", StringComparison.Ordinal) ? "write" : "read");
    }

    /// <summary>
    /// Reads the first job's figures from fio's JSON output: iops and bandwidth of <paramref name="side"/>
    /// (read or write), CPU per I/O from the job's <c>usr_cpu</c> and <c>sys_cpu</c> (percent of one CPU
    /// over <c>job_runtime</c> milliseconds) and the side's <c>total_ios</c>, context switches per I/O from the
    /// job's <c>ctx</c>, and the 50th and 99th percentiles and the maximum of each I/O's whole latency (<c>lat_ns</c>, which
    /// <see cref="FioJob"/> asks fio to give percentiles of; the completion latency <c>clat_ns</c> when fio gave none). Figures fio leaves out are NaN.
    /// </summary>
    public static FioResult Parse(string json, string command, string side)
    {
        // fio may print notices before the JSON document.
        int begin = json.IndexOf('{', StringComparison.Ordinal);
        using JsonDocument document = JsonDocument.Parse(begin > 0 ? json[begin..] : json);
        JsonElement job = document.RootElement.GetProperty("jobs")[0];
        JsonElement figures = job.GetProperty(side);
        double ios = Number(figures, "total_ios");
        double cpuPercent = Number(job, "usr_cpu") + Number(job, "sys_cpu");
        double runtimeNs = Number(job, "job_runtime") * 1e6;
        double percentile50 = double.NaN, percentile99 = double.NaN, worst = double.NaN;
        if (Latencies(figures) is { } latencies)
        {
            if (latencies.TryGetProperty("percentile", out JsonElement percentiles))
            {
                percentile50 = Number(percentiles, "50.000000");
                percentile99 = Number(percentiles, "99.000000");
            }
            if (ios > 0)
            {
                worst = Number(latencies, "max"); // a side without I/O reports a max of 0, which is no latency
            }
        }
        return new FioResult(command, figures.GetProperty("iops").GetDouble(), figures.GetProperty("bw_bytes").GetDouble())
        {
            Operations = ios,
            CpuNsPerOperation = ios > 0 ? cpuPercent / 100 * runtimeNs / ios : double.NaN,
            ContextSwitchesPerOperation = ios > 0 ? Number(job, "ctx") / ios : double.NaN,
            P50Ns = percentile50,
            P99Ns = percentile99,
            WorstNs = worst,
        };
    }

    // The whole latency of each I/O (lat_ns: submission and completion, as a caller's wait from the call to its result)
    // when fio was asked for its percentiles (FioJob: --lat_percentiles=1); else the completion latency (clat_ns).
    private static JsonElement? Latencies(JsonElement figures)
    {
        if (figures.TryGetProperty("lat_ns", out JsonElement total) && total.TryGetProperty("percentile", out _))
        {
            return total;
        }
        return figures.TryGetProperty("clat_ns", out JsonElement completion) ? completion : null;
    }

    private static double Number(JsonElement element, string name) =>
        element.TryGetProperty(name, out JsonElement value) && value.ValueKind == JsonValueKind.Number ? value.GetDouble() : double.NaN;
}
