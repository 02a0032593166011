using System.Diagnostics;
using System.Text.Json.Nodes;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Engines;

/// <summary>Process-wide engine configuration, proven in a child process (Spindle.EngineProbe).</summary>
public class ChildProcessSelectionTests
{
    private static string ProbePath => Path.Combine(AppContext.BaseDirectory, "Spindle.EngineProbe.dll");

    internal static Dictionary<string, string> RunProbe(IDictionary<string, string?> environment, string? runtimeConfig = null, string? mode = null, string[]? arguments = null)
    {
        var start = new ProcessStartInfo("dotnet") { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        start.ArgumentList.Add("exec");
        if (runtimeConfig is not null)
        {
            start.ArgumentList.Add("--runtimeconfig");
            start.ArgumentList.Add(runtimeConfig);
        }
        start.ArgumentList.Add(ProbePath);
        if (mode is not null)
        {
            start.ArgumentList.Add(mode);
        }
        foreach (string argument in arguments ?? [])
        {
            start.ArgumentList.Add(argument);
        }
        start.Environment.Remove("SPINDLE_IO_ENGINE");
        foreach (var (key, value) in environment)
        {
            start.Environment[key] = value;
        }
        using Process process = Process.Start(start)!;
        Task<string> output = process.StandardOutput.ReadToEndAsync();
        Task<string> errors = process.StandardError.ReadToEndAsync();
        Assert.True(process.WaitForExit(60_000), "the probe did not finish within 60 s");
        Assert.True(process.ExitCode == 0, $"probe exit code {process.ExitCode}: {output.Result} {errors.Result}");
        Console.WriteLine(output.Result);
        return output.Result.Split('\n', StringSplitOptions.RemoveEmptyEntries)
            .Select(line => line.Trim().Split('=', 2))
            .Where(parts => parts.Length == 2)
            .ToDictionary(parts => parts[0], parts => parts[1]);
    }

    [Fact]
    public void SPINDLE_IO_ENGINE_threadpool_selects_the_thread_pool()
    {
        Dictionary<string, string> result = RunProbe(new Dictionary<string, string?> { ["SPINDLE_IO_ENGINE"] = "threadpool" });
        Assert.Equal("ThreadPool", result["engine"]);
        // Every operation the meter saw ran on the thread pool engine.
        Assert.Matches(@"^threadpool:\d+$", result["operations"]);
    }

    [Fact]
    public void An_unknown_SPINDLE_IO_ENGINE_is_reported_and_Auto_is_used()
    {
        // Not silently ignored: the fallback counter (and an event of the Spindle event source) says so.
        Dictionary<string, string> result = RunProbe(new Dictionary<string, string?> { ["SPINDLE_IO_ENGINE"] = "bogus" });
        Assert.Equal(SpindleRandomAccess.IsIoUringAvailable ? "IoUring" : "ThreadPool", result["engine"]);
        Assert.NotEqual("0", result["fallbacks"]);
    }

    [Fact]
    public void Without_configuration_the_probe_runs_io_uring_when_the_kernel_allows_it()
    {
        Dictionary<string, string> result = RunProbe(new Dictionary<string, string?>());
        string expected = SpindleRandomAccess.IsIoUringAvailable ? "IoUring" : "ThreadPool";
        Assert.Equal(expected, result["engine"]);
        Assert.Matches($@"^{expected.ToLowerInvariant()}:\d+$", result["operations"]);
        // The reads of freshly written data are page-cache hits.
        Assert.NotEqual("0", result["fastpath"]);
    }

    [Fact]
    public void RuntimeConfig_properties_select_the_engine_and_switch_the_fast_path_off()
    {
        using var dir = new TempDirectory();
        string source = Path.Combine(AppContext.BaseDirectory, "Spindle.EngineProbe.runtimeconfig.json");
        JsonNode config = JsonNode.Parse(File.ReadAllText(source))!;
        JsonObject runtimeOptions = config["runtimeOptions"]!.AsObject();
        JsonObject properties = runtimeOptions["configProperties"] as JsonObject ?? new JsonObject();
        runtimeOptions["configProperties"] = properties;
        properties["Spindle.IoEngine"] = "threadpool";
        properties["Spindle.DisableReadFastPath"] = true;
        string path = dir.File("probe.runtimeconfig.json");
        File.WriteAllText(path, config.ToJsonString());

        // The AppContext value wins over the environment variable.
        Dictionary<string, string> result = RunProbe(new Dictionary<string, string?> { ["SPINDLE_IO_ENGINE"] = "sync" }, path);
        Assert.Equal("ThreadPool", result["engine"]);
        Assert.Matches(@"^threadpool:\d+$", result["operations"]);
        // The thread pool engine would serve these cached reads from the fast path; the switch stops it.
        Assert.Equal("0", result["fastpath"]);
    }

    [Fact]
    public void A_process_exits_cleanly_with_io_uring_reads_in_flight_on_a_closed_handle()
    {
        Dictionary<string, string> result = RunProbe(new Dictionary<string, string?>(), mode: "exit-with-pending");
        if (!SpindleRandomAccess.IsIoUringAvailable)
        {
            Console.WriteLine("io_uring is not available: the reads ran on the thread-pool fallback.");
            return;
        }
        // The reads were really still in flight when the process exited (RunProbe checked exit code 0, in time).
        Assert.Equal("100", result["pending"]);
    }

    [Fact]
    public void With_io_uring_switched_off_every_request_falls_back_to_the_thread_pool_and_says_so()
    {
        using var dir = new TempDirectory();
        string source = Path.Combine(AppContext.BaseDirectory, "Spindle.EngineProbe.runtimeconfig.json");
        JsonNode config = JsonNode.Parse(File.ReadAllText(source))!;
        JsonObject runtimeOptions = config["runtimeOptions"]!.AsObject();
        JsonObject properties = runtimeOptions["configProperties"] as JsonObject ?? new JsonObject();
        runtimeOptions["configProperties"] = properties;
        properties["Spindle.DisableIoUring"] = true;
        string path = dir.File("probe.runtimeconfig.json");
        File.WriteAllText(path, config.ToJsonString());

        // Even reads that ask for io_uring by name run on the pool, and the fallback is counted.
        Dictionary<string, string> result = RunProbe(new Dictionary<string, string?>(), path, mode: "force-iouring");
        Assert.Equal("ThreadPool", result["engine"]);
        Assert.Equal("False", result["iouring"]);
        Assert.Matches(@"^threadpool:\d+$", result["operations"]);
        Assert.NotEqual("0", result["fallbacks"]);
    }
}
