using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Text.Json;

namespace Spindle.Clients.Bench;

/// <summary>
/// The Garnet rows (issue 33): Garnet in a child process per device (<see cref="GarnetHost"/>), its storage tier
/// holding data ten times its log memory, driven by Redis's own <c>redis-benchmark</c> at 64 connections: uniform
/// random GETs and a 90/10 GET/SET mix, at Garnet's default settings and with the thread pool sized (256, Garnet's
/// <c>--minthreads</c>). Devices interleaved round by round, the order rotating. Per row: ops/s, p50/p99/max
/// latency, the server's CPU per operation (<c>/proc/&lt;pid&gt;/stat</c>), its threads' context switches per
/// operation and bytes it read from disk per operation (<c>/proc/&lt;pid&gt;/io</c>); per phase on the console also the
/// work items its thread pool ran per operation and how its thread count grew (<see cref="ThreadGrowth"/>).
/// </summary>
internal static class GarnetBench
{
    private const int Connections = 64;
    private const int SizedPool = 256;
    private const int ValueSize = 1024;

    private sealed record Sizes(string LogMemory, long LogMemoryBytes, string PageSize, int Keys, int DefaultRequests, int SizedRequests);

    /// <summary>One phase of one round on one device.</summary>
    private sealed record Sample(string Device, string Phase, double OpsPerSecond, double P50Ms, double P99Ms, double MaxMs, double CpuMicrosecondsPerOp, double DiskBytesPerOp, double SwitchesPerOp)
    {
        public double AllocatedBytesPerOp { get; init; }
        public double GcPauseMs { get; init; }

        /// <summary>How the server's thread count grew during the phase (<see cref="ThreadGrowth.Summary"/>).</summary>
        public string Threads { get; init; } = "";
    }

    /// <summary>The server's garbage collector since it started (its <c>gc</c> command): bytes allocated, collections per generation, time paused.</summary>
    private sealed record GcCounts(long AllocatedBytes, int Collections0, int Collections1, int Collections2, double PauseMs)
    {
        public static GcCounts Of(Process server)
        {
            server.StandardInput.WriteLine("gc");
            string[] f = (server.StandardOutput.ReadLine() ?? "").Split(' ');
            return f.Length == 5
                ? new(long.Parse(f[0], CultureInfo.InvariantCulture), int.Parse(f[1], CultureInfo.InvariantCulture), int.Parse(f[2], CultureInfo.InvariantCulture), int.Parse(f[3], CultureInfo.InvariantCulture), double.Parse(f[4], CultureInfo.InvariantCulture))
                : throw new GarnetHostException($"unexpected answer to gc: {string.Join(' ', f)}");
        }

        public static GcCounts operator -(GcCounts after, GcCounts before)
            => new(after.AllocatedBytes - before.AllocatedBytes, after.Collections0 - before.Collections0, after.Collections1 - before.Collections1, after.Collections2 - before.Collections2, after.PauseMs - before.PauseMs);
    }

    /// <summary>A row of the report: medians over the rounds, and the worst single request of any round.</summary>
    internal sealed record GarnetRow(string Phase, string Device, double OpsPerSecond, double P50Ms, double P99Ms, double WorstMs, double CpuMicrosecondsPerOp, double DiskBytesPerOp, double SwitchesPerOp, double AllocatedBytesPerOp, double GcPauseMs);

    // SPINDLE_GARNET_WARMUP=0 measures each configuration's first phase from its first request (the pool's growth included).
    private static readonly bool WarmUp = Environment.GetEnvironmentVariable("SPINDLE_GARNET_WARMUP") != "0";

    private static readonly string[] Phases = ["GETs, defaults", "90/10 GET/SET, defaults", "GETs, pool sized", "90/10 GET/SET, pool sized"];

    public static void Run(BenchSettings settings)
    {
        if (!OnPath("redis-benchmark") || !OnPath("redis-cli"))
        {
            Console.WriteLine("garnet rows skipped: redis-benchmark or redis-cli missing (Debian: apt-get install redis-tools)");
            return;
        }
        Sizes sizes = settings.Quick
            ? new("16m", 16L << 20, "1m", 180_000, 5_000, 20_000)
            : new("128m", 128L << 20, "4m", 2_000_000, 10_000, 50_000); // the issue's own measurement: 2 M keys, 15x a 128 MiB log memory
        // SPINDLE_GARNET_REQUESTS=DEFAULTS,SIZED sets the requests of each phase at the defaults and with the pool sized,
        // to see whether a row's figures change with the phase's length (a transient at its start, or steady state).
        if (Environment.GetEnvironmentVariable("SPINDLE_GARNET_REQUESTS")?.Split(',') is [string atDefaults, string sized])
        {
            sizes = sizes with { DefaultRequests = int.Parse(atDefaults, CultureInfo.InvariantCulture), SizedRequests = int.Parse(sized, CultureInfo.InvariantCulture) };
        }
        string? nativeApp = NativeApp(settings, out string nativeNote);
        Console.WriteLine($"garnet rows: {sizes.Keys:N0} keys x {ValueSize} B (about {(double)sizes.Keys * ValueSize / sizes.LogMemoryBytes:F0}x the {sizes.LogMemory} log memory), {Connections} connections, {settings.Rounds} rounds; native device: {nativeNote}");
        var samples = new List<Sample>();
        var nativeLoaded = new Dictionary<string, string>();
        // SPINDLE_GARNET_DEVICES=spindle,native (comma-separated) runs only those devices, to profile or compare two.
        string[] devices = Environment.GetEnvironmentVariable("SPINDLE_GARNET_DEVICES") is { Length: > 0 } only
            ? GarnetHost.Devices.Intersect(only.Split(',', StringSplitOptions.TrimEntries)).ToArray()
            : GarnetHost.Devices;
        for (int round = 0; round < settings.Rounds; round++)
        {
            // Rotated each round, so drift on a shared machine does not always hit the same device.
            foreach (string device in devices.Skip(round % devices.Length).Concat(devices.Take(round % devices.Length)))
            {
                try
                {
                    samples.AddRange(RunDevice(settings, sizes, device, device.StartsWith("native", StringComparison.Ordinal) ? nativeApp : null, nativeLoaded));
                }
                catch (Exception e) when (e is GarnetHostException or IOException)
                {
                    // A device that fails (Garnet's packaged native library where glibc is too old stops the server at
                    // its first I/O, and the load's connection times out) is reported, and the other devices still run.
                    Console.WriteLine($"  {device}: {e.Message}");
                }
            }
        }
        var rows = new List<GarnetRow>();
        foreach (string phase in Phases)
        {
            foreach (string device in devices)
            {
                var of = samples.Where(s => s.Device == device && s.Phase == phase).ToList();
                if (of.Count > 0)
                {
                    rows.Add(new(phase, device, Median(of.Select(s => s.OpsPerSecond)), Median(of.Select(s => s.P50Ms)), Median(of.Select(s => s.P99Ms)),
                        of.Max(s => s.MaxMs), Median(of.Select(s => s.CpuMicrosecondsPerOp)), Median(of.Select(s => s.DiskBytesPerOp)), Median(of.Select(s => s.SwitchesPerOp)),
                        Median(of.Select(s => s.AllocatedBytesPerOp)), of.Max(s => s.GcPauseMs)));
                }
            }
        }
        Write(settings, sizes, rows, nativeNote, nativeLoaded);
    }

    private static IEnumerable<Sample> RunDevice(BenchSettings settings, Sizes sizes, string device, string? nativeApp, Dictionary<string, string> nativeLoaded)
    {
        string directory = Path.Combine(settings.WorkDirectory, $"garnet-{device}-{Guid.NewGuid():N}");
        Directory.CreateDirectory(directory);
        int port = FreePort();
        string app = device.StartsWith("native", StringComparison.Ordinal) ? nativeApp ?? AppContext.BaseDirectory : AppContext.BaseDirectory;
        var start = new ProcessStartInfo("dotnet")
        {
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            WorkingDirectory = directory,
        };
        foreach (string argument in new[] { "exec", Path.Combine(app, "Spindle.Clients.Bench.dll"), "--garnet-server", "--device", device, "--dir", directory, "--port", port.ToString(CultureInfo.InvariantCulture), "--memory", sizes.LogMemory, "--page", sizes.PageSize })
        {
            start.ArgumentList.Add(argument);
        }
        start.Environment["DOTNET_gcServer"] = "1"; // as Garnet's own server runs
        using Process server = Process.Start(start)!;
        var errors = new StringBuilder();
        server.ErrorDataReceived += (_, e) => { lock (errors) { errors.AppendLine(e.Data); } };
        server.BeginErrorReadLine();
        var samples = new List<Sample>();
        try
        {
            if (server.StandardOutput.ReadLine() != "ready")
            {
                throw new GarnetHostException($"did not start: {FirstLine(errors)}");
            }
            Load(port, sizes.Keys);
            long stored = long.Parse(RunTool("redis-cli", "-p", port.ToString(CultureInfo.InvariantCulture), "dbsize").Trim(), CultureInfo.InvariantCulture);
            if (stored != sizes.Keys || server.HasExited)
            {
                throw new GarnetHostException($"holds {stored:N0} keys of {sizes.Keys:N0} after loading: {FirstLine(errors)}");
            }
            server.StandardInput.WriteLine("mechanisms"); // the load's reads are not a phase's
            server.StandardOutput.ReadLine();
            for (int phase = 0; phase < Phases.Length; phase++)
            {
                if (phase == 2)
                {
                    server.StandardInput.WriteLine($"minthreads {SizedPool}");
                    server.StandardOutput.ReadLine();
                }
                int requests = phase < 2 ? sizes.DefaultRequests : sizes.SizedRequests;
                if (phase % 2 == 0 && WarmUp)
                {
                    // Each configuration is measured in steady state, as an operator's long-running server serves: first
                    // as many GETs again, not counted, while the pool grows to hold the sessions that wait (their figures
                    // are printed, marked, so the transient stays visible).
                    Sample warmUp = Measure(server.Id, device, Phases[phase] + " (warm-up)", () => Gets(port, sizes.Keys, requests));
                    Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{Line(warmUp)}, {warmUp.Threads} (not counted)"));
                    server.StandardInput.WriteLine("mechanisms"); // the warm-up's reads are not the phase's
                    server.StandardOutput.ReadLine();
                }
                GcCounts gcBefore = GcCounts.Of(server);
                long workItemsBefore = PoolWorkItems(server);
                Sample sample = Measure(server.Id, device, Phases[phase], () => phase % 2 == 0 ? Gets(port, sizes.Keys, requests) : Mix(port, sizes.Keys, requests));
                if (server.HasExited)
                {
                    throw new GarnetHostException($"failed during {Phases[phase]}: {FirstLine(errors)}");
                }
                GcCounts gc = GcCounts.Of(server) - gcBefore;
                double workItemsPerOp = (double)(PoolWorkItems(server) - workItemsBefore) / requests;
                sample = sample with { AllocatedBytesPerOp = (double)gc.AllocatedBytes / requests, GcPauseMs = gc.PauseMs };
                samples.Add(sample);
                server.StandardInput.WriteLine("mechanisms");
                string reads = server.StandardOutput.ReadLine() ?? "none"; // how Spindle ran this phase's reads (none on Garnet's own devices)
                Console.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{Line(sample)}  cs {sample.SwitchesPerOp:F1}/op  disk {sample.DiskBytesPerOp:N0} B/op  alloc {sample.AllocatedBytesPerOp:N0} B/op  gc {gc.Collections0}/{gc.Collections1}/{gc.Collections2} pause {gc.PauseMs:F0} ms  pool work items {workItemsPerOp:F2}/op, {sample.Threads}  Spindle reads: {reads}"));
            }
            server.StandardInput.WriteLine("native");
            string? loaded = server.StandardOutput.ReadLine();
            if (loaded is not null and not "none")
            {
                nativeLoaded[device] = loaded;
            }
            server.StandardInput.WriteLine("quit");
            server.WaitForExit(60_000);
        }
        finally
        {
            if (!server.HasExited)
            {
                server.Kill(entireProcessTree: true);
                server.WaitForExit();
            }
            Directory.Delete(directory, recursive: true);
        }
        return samples;
    }

    /// <summary>A phase's console line up to its CPU per operation: device, phase, ops/s, latencies.</summary>
    private static string Line(Sample sample) => string.Create(CultureInfo.InvariantCulture,
        $"  {sample.Device,-18} {sample.Phase,-26} {sample.OpsPerSecond,9:N0} ops/s  p50 {sample.P50Ms:F2} p99 {sample.P99Ms:F2} max {sample.MaxMs:F0} ms  cpu {sample.CpuMicrosecondsPerOp:F0} us/op");

    /// <summary>The work items the server's thread pool completed since it started (its <c>pool</c> command).</summary>
    private static long PoolWorkItems(Process server)
    {
        server.StandardInput.WriteLine("pool");
        string answer = server.StandardOutput.ReadLine() ?? "";
        return long.TryParse(answer, NumberStyles.Integer, CultureInfo.InvariantCulture, out long count)
            ? count
            : throw new GarnetHostException($"unexpected answer to pool: {answer}");
    }

    /// <summary>Runs one phase and reads the server's CPU time, disk reads and context switches around it, and its threads through it.</summary>
    private static Sample Measure(int pid, string device, string phase, Func<(long Operations, double Seconds, double P50, double P99, double Max)> run)
    {
        (long cpuBefore, long readBefore, long switchesBefore) = (CpuTicks(pid), ReadBytes(pid), ContextSwitches(pid));
        using var threads = new ThreadGrowth(pid);
        var (operations, seconds, p50, p99, max) = run();
        string growth = threads.Summary();
        (long cpuAfter, long readAfter, long switchesAfter) = (CpuTicks(pid), ReadBytes(pid), ContextSwitches(pid));
        double cpuMicroseconds = (cpuAfter - cpuBefore) * 1e6 / ClockTicksPerSecond;
        return new(device, phase, operations / seconds, p50, p99, max, cpuMicroseconds / operations, (double)(readAfter - readBefore) / operations,
            (double)(switchesAfter - switchesBefore) / operations) { Threads = growth };
    }

    private static (long, double, double, double, double) Gets(int port, int keys, int requests)
    {
        var clock = Stopwatch.StartNew();
        Result get = RedisBenchmark(port, "get", keys, requests, Connections);
        return (requests, clock.Elapsed.TotalSeconds, get.P50, get.P99, get.Max);
    }

    /// <summary>
    /// 90/10: redis-benchmark runs one command per client, so two run together, GETs on 58 connections and SETs
    /// on 6, each with its share of the requests. Latency percentiles are the GETs'; the worst is of both.
    /// </summary>
    private static (long, double, double, double, double) Mix(int port, int keys, int requests)
    {
        int sets = requests / 10;
        var clock = Stopwatch.StartNew();
        Task<Result> setTask = Task.Run(() => RedisBenchmark(port, "set", keys, sets, Connections / 10));
        Result get = RedisBenchmark(port, "get", keys, requests - sets, Connections - (Connections / 10));
        Result set = setTask.Result;
        return (requests, clock.Elapsed.TotalSeconds, get.P50, get.P99, Math.Max(get.Max, set.Max));
    }

    private sealed record Result(double P50, double P99, double Max);

    private static Result RedisBenchmark(int port, string test, int keys, int requests, int connections)
    {
        string csv = RunTool("redis-benchmark", "-h", "127.0.0.1", "-p", port.ToString(CultureInfo.InvariantCulture), "-t", test, "-r", keys.ToString(CultureInfo.InvariantCulture),
            "-n", requests.ToString(CultureInfo.InvariantCulture), "-c", connections.ToString(CultureInfo.InvariantCulture), "-d", ValueSize.ToString(CultureInfo.InvariantCulture), "--csv", "--precision", "3");
        // "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
        string line = csv.Split('\n').First(l => l.StartsWith($"\"{test.ToUpperInvariant()}\"", StringComparison.Ordinal));
        double[] fields = line.Split(',').Skip(1).Select(f => double.Parse(f.Trim('"', '\r'), CultureInfo.InvariantCulture)).ToArray();
        return new(fields[3], fields[5], fields[6]);
    }

    /// <summary>Loads keys <c>key:000000000000</c>… (redis-benchmark's <c>-r</c> names) with 1 KiB values through <c>redis-cli --pipe</c>.</summary>
    private static void Load(int port, int keys)
    {
        var start = new ProcessStartInfo("redis-cli") { RedirectStandardInput = true, RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (string argument in new[] { "-p", port.ToString(CultureInfo.InvariantCulture), "--pipe", "--pipe-timeout", "120" })
        {
            start.ArgumentList.Add(argument);
        }
        using Process cli = Process.Start(start)!;
        Task<string> output = cli.StandardOutput.ReadToEndAsync();
        Task<string> error = cli.StandardError.ReadToEndAsync();
        using (var input = new BufferedStream(cli.StandardInput.BaseStream, 1 << 20))
        {
            byte[] value = new byte[ValueSize];
            Span<byte> key = stackalloc byte[16];
            for (int i = 0; i < keys; i++)
            {
                // A value that says which key it belongs to, the rest filler.
                value.AsSpan().Fill((byte)('a' + (i % 26)));
                Encoding.ASCII.GetBytes(i.ToString("D12", CultureInfo.InvariantCulture), value);
                Encoding.ASCII.GetBytes($"key:{i:D12}", key);
                input.Write("*3\r\n$3\r\nSET\r\n$16\r\n"u8);
                input.Write(key);
                input.Write("\r\n$1024\r\n"u8);
                input.Write(value);
                input.Write("\r\n"u8);
            }
        }
        cli.WaitForExit();
        string summary = output.Result;
        if (cli.ExitCode != 0 || !summary.Contains("errors: 0", StringComparison.Ordinal))
        {
            throw new GarnetHostException($"loading failed: {summary.Trim()} {error.Result.Trim()}");
        }
    }

    /// <summary>
    /// The application folder the native rows run from. Garnet resolves its native device from the folder of its
    /// own assembly first, so a binary built by bench/garnet-native/build.sh ($SPINDLE_GARNET_NATIVE or
    /// bench/garnet-native/out) is run from a copy of this folder with the packaged binaries replaced.
    /// </summary>
    private static string? NativeApp(BenchSettings settings, out string note)
    {
        string? built = Environment.GetEnvironmentVariable("SPINDLE_GARNET_NATIVE") ?? FindUp("bench/garnet-native/out");
        string packaged = Path.Combine(AppContext.BaseDirectory, "runtimes", "linux-x64", "native");
        if (built is null || !File.Exists(Path.Combine(built, "libnative_device.so")))
        {
            note = "the packaged runtimes/linux-x64/native/libnative_device.so (build one with bench/garnet-native/build.sh GARNET_SOURCE_DIR if it does not load here)";
            return null;
        }
        string copy = Path.Combine(settings.WorkDirectory, "garnet-native-app");
        if (Directory.Exists(copy))
        {
            Directory.Delete(copy, recursive: true);
        }
        RunTool("cp", "-r", AppContext.BaseDirectory, copy);
        foreach (string library in new[] { "libnative_device.so", "libnative_device_libaio.so" })
        {
            if (File.Exists(Path.Combine(built, library)))
            {
                File.Copy(Path.Combine(built, library), Path.Combine(copy, "runtimes", "linux-x64", "native", library), overwrite: true);
            }
        }
        note = $"built from Garnet's sources ({Path.Combine(built, "libnative_device.so")}), not the packaged one ({packaged})";
        return copy;
    }

    private static void Write(BenchSettings settings, Sizes sizes, List<GarnetRow> rows, string nativeNote, Dictionary<string, string> nativeLoaded)
    {
        var md = new StringBuilder();
        md.AppendLine(CultureInfo.InvariantCulture, $"Garnet on each device ({(settings.Quick ? "quick" : "full")}, {settings.Rounds} interleaved rounds, medians; worst = the slowest single request of any round; {Environment.ProcessorCount} cores)");
        md.AppendLine();
        md.AppendLine(CultureInfo.InvariantCulture, $"Storage tier on, objects off, log memory {sizes.LogMemory} ({sizes.PageSize} pages), {sizes.Keys:N0} keys × {ValueSize} B; redis-benchmark, {Connections} connections, uniform random keys, {sizes.DefaultRequests:N0} requests per phase at the defaults and {sizes.SizedRequests:N0} with the pool sized{(WarmUp ? ", each configuration after as many GETs not counted (a warm-up while the thread pool grows; its figures are on the console)" : ", no warm-up")}; pool sized = minimum threads {SizedPool}. CPU, context switches (of its threads alive at the end of the phase), disk reads and managed allocations are the server process's, per operation; GC pause: the server's garbage-collection pauses in the phase.");
        md.AppendLine(CultureInfo.InvariantCulture, $"Native device: {nativeNote}; mapped: {(nativeLoaded.Count == 0 ? "none (did not load)" : string.Join(", ", nativeLoaded.Select(p => $"{p.Key} → {p.Value}")))}.");
        md.AppendLine();
        md.AppendLine("| workload | device | ops/s | p50 ms | p99 ms | worst ms | CPU µs/op | switches/op | disk B/op | allocated B/op | GC pause ms (most in a round) |");
        md.AppendLine("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        foreach (GarnetRow row in rows)
        {
            md.AppendLine(CultureInfo.InvariantCulture, $"| {row.Phase} | {row.Device} | {row.OpsPerSecond:N0} | {row.P50Ms:F2} | {row.P99Ms:F2} | {row.WorstMs:F0} | {row.CpuMicrosecondsPerOp:F0} | {row.SwitchesPerOp:F1} | {row.DiskBytesPerOp:N0} | {row.AllocatedBytesPerOp:N0} | {row.GcPauseMs:F0} |");
        }
        File.WriteAllText(Path.Combine(settings.OutDirectory, "garnet-report.md"), md.ToString());
        File.WriteAllText(Path.Combine(settings.OutDirectory, "garnet-report.json"), JsonSerializer.Serialize(new { settings.Quick, settings.Rounds, Native = nativeNote, NativeLoaded = nativeLoaded, Rows = rows }, new JsonSerializerOptions { WriteIndented = true }));
        Console.WriteLine();
        Console.Write(md);
    }

    private static long CpuTicks(int pid)
    {
        // Fields after the command name (which may hold spaces): utime is the 14th field, stime the 15th.
        string stat = File.ReadAllText($"/proc/{pid}/stat");
        string[] fields = stat[(stat.LastIndexOf(')') + 2)..].Split(' ');
        return long.Parse(fields[11], CultureInfo.InvariantCulture) + long.Parse(fields[12], CultureInfo.InvariantCulture);
    }

    /// <summary>
    /// Voluntary and involuntary context switches of the server's threads alive now (<c>/proc/&lt;pid&gt;/task/*/status</c>;
    /// the counts of threads that exited in between are lost, few with the pool's threads kept alive).
    /// </summary>
    private static long ContextSwitches(int pid)
    {
        long total = 0;
        foreach (string task in Directory.EnumerateDirectories($"/proc/{pid}/task"))
        {
            try
            {
                foreach (string line in File.ReadLines(Path.Combine(task, "status")))
                {
                    if (line.StartsWith("voluntary_ctxt_switches:", StringComparison.Ordinal) || line.StartsWith("nonvoluntary_ctxt_switches:", StringComparison.Ordinal))
                    {
                        total += long.Parse(line[(line.IndexOf(':') + 1)..].Trim(), CultureInfo.InvariantCulture);
                    }
                }
            }
            catch (IOException)
            {
                // The thread exited while being read.
            }
        }
        return total;
    }

    private static long ReadBytes(int pid)
        => long.Parse(File.ReadLines($"/proc/{pid}/io").First(l => l.StartsWith("read_bytes:", StringComparison.Ordinal))["read_bytes:".Length..].Trim(), CultureInfo.InvariantCulture);

    private static readonly long ClockTicksPerSecond = long.Parse(RunTool("getconf", "CLK_TCK").Trim(), CultureInfo.InvariantCulture);

    private static string RunTool(string tool, params string[] arguments)
    {
        var start = new ProcessStartInfo(tool) { RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }
        using Process process = Process.Start(start)!;
        Task<string> error = process.StandardError.ReadToEndAsync();
        string output = process.StandardOutput.ReadToEnd();
        process.WaitForExit();
        if (process.ExitCode != 0)
        {
            throw new GarnetHostException($"{tool} failed ({process.ExitCode}): {error.Result.Trim()}");
        }
        return output;
    }

    private static bool OnPath(string tool)
        => (Environment.GetEnvironmentVariable("PATH") ?? "").Split(':').Any(d => File.Exists(Path.Combine(d, tool)));

    private static string? FindUp(string relative)
    {
        for (var directory = new DirectoryInfo(Directory.GetCurrentDirectory()); directory is not null; directory = directory.Parent)
        {
            string candidate = Path.Combine(directory.FullName, relative);
            if (Directory.Exists(candidate))
            {
                return candidate;
            }
        }
        return null;
    }

    private static string FirstLine(StringBuilder errors)
    {
        lock (errors)
        {
            return errors.ToString().Split('\n').FirstOrDefault(l => l.Contains("Exception", StringComparison.Ordinal)) ?? errors.ToString().Split('\n').FirstOrDefault() ?? "";
        }
    }

    private static int FreePort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }

    private static double Median(IEnumerable<double> values)
    {
        double[] sorted = values.Order().ToArray();
        return sorted.Length % 2 == 1 ? sorted[sorted.Length / 2] : (sorted[(sorted.Length / 2) - 1] + sorted[sorted.Length / 2]) / 2;
    }
}

/// <summary>A Garnet child process that did not start, load or finish; the row is left out with this reason.</summary>
internal sealed class GarnetHostException(string message) : Exception(message);
