using System.Diagnostics;
using System.Diagnostics.Metrics;
using System.Runtime.InteropServices;
using System.Text.Json;
using Microsoft.Win32.SafeHandles;
using Spindle;
using Spindle.Workloads;

[assembly: System.Runtime.Versioning.SupportedOSPlatform("linux")]

// How completions reach callers (issue 32), measured as a user sees it: O_DIRECT 4 KiB random reads of a 1 GiB file,
// Auto beside System.IO's RandomAccess and fio, each contender in a child process of its own (so getrusage covers
// it alone), rounds interleaved, medians and ratios printed. One command:
//   dotnet run -c Release --project bench/Spindle.DeliveryBench -- [--dir DIR] [--rounds N] [--seconds S] [--only WORKLOAD]
//     [--depths 1,8,32,128] [--works 20,100,500] [--work-depths 8,32]
// --auto-builds PATH[,PATH] runs the Auto rows of other builds of this harness too (an older Spindle), in the same rounds.
// Workloads: qd (1/8/32/128 in flight, no work after the await), work (20/100/500 µs after the await, 8 and 32 in
// flight, all cores and one core), sync (64 pool threads blocking on ReadAsync), batch (ReadBatchAsync of 32 against
// fio's batched submit and complete), burst (64 reads started at once, 31 times: io_uring_enter per read), idle (bursts
// of reads after 2 ms with nothing in flight: the latency of the read that finds the ring idle).
if (args.Length > 0 && args[0] == "child")
{
    return Child.Run(args[1..]);
}
return Parent.Run(args);

static class Parent
{
    internal static int Run(string[] args)
    {
        string dir = Arg(args, "--dir", "/var/tmp");
        int rounds = int.Parse(Arg(args, "--rounds", "5"));
        double seconds = double.Parse(Arg(args, "--seconds", "3"));
        string only = Arg(args, "--only", "qd,sync,batch,burst,work,idle");
        int[] depths = Arg(args, "--depths", "1,8,32,128").Split(',').Select(int.Parse).ToArray();
        int[] works = Arg(args, "--works", "20,100,500").Split(',').Select(int.Parse).ToArray();
        int[] workDepths = Arg(args, "--work-depths", "8,32").Split(',').Select(int.Parse).ToArray();
        string[] builds = Arg(args, "--auto-builds", "").Split(',', StringSplitOptions.RemoveEmptyEntries); // other builds of this harness to run as further Auto contenders
        string file = Path.Combine(dir, "spindle-delivery-1g.dat");
        EnsureFile(file);
        bool haveFio = ProgramPath.Find("fio") is not null;
        if (!haveFio)
        {
            Console.WriteLine("fio: not found, so the rows have no fio contender. Install it to compare (Debian, Ubuntu: apt-get install fio).");
        }
        var rows = new List<(string Name, string[] Contenders, Func<string, string[]> ChildArgs, Func<string?>? Fio, string Cores)>();
        foreach (string workload in only.Split(','))
        {
            switch (workload)
            {
                case "qd":
                    foreach (int depth in depths)
                    {
                        rows.Add(($"qd {depth}", ["auto", "sysio"], c => ["qd", c, file, depth.ToString(), "0", seconds.ToString()], () => FioArgs(file, depth, seconds, batch: false), ""));
                    }
                    break;
                case "work":
                    foreach (string cores in new[] { "0", "0,1" })
                    {
                        foreach (int depth in workDepths)
                        {
                            foreach (int work in works)
                            {
                                rows.Add(($"work {work}us qd {depth} cores {cores}", ["auto", "sysio"], c => ["qd", c, file, depth.ToString(), work.ToString(), seconds.ToString()], null, cores));
                            }
                        }
                    }
                    break;
                case "sync":
                    rows.Add(("sync-over-async 64 threads", ["auto", "sysio"], c => ["sync", c, file, "64", seconds.ToString()], null, ""));
                    break;
                case "batch":
                    rows.Add(("ReadBatchAsync 32", ["auto", "sysio"], c => ["batch", c, file, "32", seconds.ToString()], () => FioArgs(file, 32, seconds, batch: true), ""));
                    break;
                case "syncbatch":
                    rows.Add(("ReadBatchAsync 32, waited synchronously", ["auto", "sysio"], c => ["syncbatch", c, file, "32", seconds.ToString()], () => FioArgs(file, 32, seconds, batch: true), ""));
                    break;
                case "burst":
                    rows.Add(("64 at once x31", ["auto"], c => ["burst", c, file, "64", "31"], null, ""));
                    break;
                case "idle":
                    foreach (int depth in new[] { 1, 8 })
                    {
                        rows.Add(($"first read after idle, {depth} in flight", ["auto", "sysio"], c => ["idle", c, file, depth.ToString(), seconds.ToString()], null, ""));
                    }
                    break;
            }
        }
        foreach (var row in rows)
        {
            var results = new Dictionary<string, List<Result>>();
            for (int round = 0; round < rounds; round++)
            {
                foreach (string contender in row.Contenders)
                {
                    Add(results, contender, RunChild(Environment.ProcessPath!, row.ChildArgs(contender), row.Cores));
                    if (contender == "auto")
                    {
                        for (int b = 0; b < builds.Length; b++)
                        {
                            Add(results, $"auto (build {b + 1})", RunChild(builds[b], row.ChildArgs(contender), row.Cores));
                        }
                    }
                }
                if (haveFio && row.Fio?.Invoke() is string fio)
                {
                    Add(results, "fio", RunFio(fio, row.Cores));
                }
            }
            Print(row.Name, results);
        }
        return 0;
    }

    private static void Add(Dictionary<string, List<Result>> results, string key, Result? result)
    {
        if (result is null)
        {
            return;
        }
        if (!results.TryGetValue(key, out var list))
        {
            results[key] = list = [];
        }
        list.Add(result);
    }

    private static void Print(string name, Dictionary<string, List<Result>> results)
    {
        Console.WriteLine($"## {name}");
        Console.WriteLine("| contender | ops/s | CPU us/op | ctx sw/op | enters/op | p50 us | p99 us | worst wait ms | methods JIT-compiled while timed | rounds |");
        Console.WriteLine("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
        foreach (var (key, list) in results)
        {
            Console.WriteLine($"| {key} | {Median(list, r => r.OpsPerSecond):F0} | {Median(list, r => r.CpuMicrosPerOp):F2} | {Median(list, r => r.SwitchesPerOp):F3} | {Median(list, r => r.EntersPerOp):F3} | {Median(list, r => r.P50Micros):F1} | {Median(list, r => r.P99Micros):F1} | {Median(list, r => r.WorstWaitMs):F1} | {Median(list, r => r.JitMethodsWhileTimed):F0} | {list.Count} |");
        }
        if (results.TryGetValue("auto", out var auto))
        {
            foreach (string other in results.Keys.Where(k => k != "auto"))
            {
                if (results.TryGetValue(other, out var o))
                {
                    Console.WriteLine($"Auto / {other}: ops/s {Median(auto, r => r.OpsPerSecond) / Median(o, r => r.OpsPerSecond):F2}x, CPU per op {Median(auto, r => r.CpuMicrosPerOp) / Median(o, r => r.CpuMicrosPerOp):F2}x, p99 {Median(auto, r => r.P99Micros) / Median(o, r => r.P99Micros):F2}x");
                }
            }
        }
        Console.WriteLine();
        Console.Out.Flush();
    }

    private static double Median(List<Result> list, Func<Result, double> pick)
    {
        double[] values = list.Select(pick).Order().ToArray();
        return values.Length == 0 ? double.NaN : values.Length % 2 == 1 ? values[values.Length / 2] : (values[values.Length / 2 - 1] + values[values.Length / 2]) / 2;
    }

    private static Result? RunChild(string self, string[] childArgs, string cores)
    {
        var start = new ProcessStartInfo(cores.Length > 0 ? "taskset" : self) { RedirectStandardOutput = true };
        if (cores.Length > 0)
        {
            start.ArgumentList.Add("-c");
            start.ArgumentList.Add(cores);
            start.ArgumentList.Add(self);
        }
        start.ArgumentList.Add("child");
        foreach (string a in childArgs)
        {
            start.ArgumentList.Add(a);
        }
        using Process process = Process.Start(start)!;
        string output = process.StandardOutput.ReadToEnd();
        process.WaitForExit();
        string? line = output.Split('\n').LastOrDefault(l => l.StartsWith('{'));
        return line is null ? null : JsonSerializer.Deserialize<Result>(line, Result.Json);
    }

    private static string FioArgs(string file, int depth, double seconds, bool batch)
        => $"--name=r --filename={file} --ioengine=io_uring --direct=1 --rw=randread --bs=4k --iodepth={depth} --time_based --runtime={seconds}s --ramp_time=0.5s --output-format=json --lat_percentiles=1"
           + (batch ? $" --iodepth_batch_submit={depth} --iodepth_batch_complete_min={depth}" : "");

    private static Result? RunFio(string fioArgs, string cores)
    {
        var start = new ProcessStartInfo(cores.Length > 0 ? "taskset" : "fio") { RedirectStandardOutput = true, RedirectStandardError = true };
        if (cores.Length > 0)
        {
            start.ArgumentList.Add("-c");
            start.ArgumentList.Add(cores);
            start.ArgumentList.Add("fio");
        }
        foreach (string a in fioArgs.Split(' '))
        {
            start.ArgumentList.Add(a);
        }
        using (Process process = Process.Start(start)!)
        {
            string output = process.StandardOutput.ReadToEnd();
            process.WaitForExit();
            using JsonDocument doc = JsonDocument.Parse(output[output.IndexOf('{')..]);
            JsonElement job = doc.RootElement.GetProperty("jobs")[0];
            JsonElement read = job.GetProperty("read");
            double ios = read.GetProperty("total_ios").GetDouble();
            double runtimeMs = read.GetProperty("runtime").GetDouble();
            double cpuFraction = (job.GetProperty("usr_cpu").GetDouble() + job.GetProperty("sys_cpu").GetDouble()) / 100;
            double ctx = job.GetProperty("ctx").GetDouble();
            return new Result
            {
                OpsPerSecond = ios / (runtimeMs / 1000),
                CpuMicrosPerOp = cpuFraction * runtimeMs * 1000 / ios,
                SwitchesPerOp = ctx / ios,
                EntersPerOp = double.NaN,
                WorstWaitMs = read.GetProperty("lat_ns").GetProperty("max").GetDouble() / 1e6, // submission and completion
                P50Micros = LatencyPercentile(read, "50.000000"),
                P99Micros = LatencyPercentile(read, "99.000000"),
            };
        }
    }

    // fio's whole latency per I/O (lat_ns: submission and completion), as the children measure theirs.
    private static double LatencyPercentile(JsonElement read, string percent)
        => read.GetProperty("lat_ns").TryGetProperty("percentile", out JsonElement percentiles) ? percentiles.GetProperty(percent).GetDouble() / 1e3 : double.NaN;

    private static void EnsureFile(string file)
    {
        const long Size = 1L << 30;
        if (File.Exists(file) && new FileInfo(file).Length == Size)
        {
            return;
        }
        using var stream = new FileStream(file, FileMode.Create, FileAccess.Write);
        byte[] chunk = new byte[1 << 20];
        for (long written = 0; written < Size; written += chunk.Length)
        {
            Random.Shared.NextBytes(chunk);
            stream.Write(chunk);
        }
        stream.Flush(true);
    }

    private static string Arg(string[] args, string name, string fallback)
    {
        int i = Array.IndexOf(args, name);
        return i >= 0 && i + 1 < args.Length ? args[i + 1] : fallback;
    }
}

sealed class Result
{
    // NaN for what a workload does not measure (latency percentiles outside the qd loops).
    public static readonly JsonSerializerOptions Json = new() { NumberHandling = System.Text.Json.Serialization.JsonNumberHandling.AllowNamedFloatingPointLiterals };

    public double OpsPerSecond { get; set; }
    public double CpuMicrosPerOp { get; set; }
    public double SwitchesPerOp { get; set; }
    public double EntersPerOp { get; set; }
    public double WorstWaitMs { get; set; }
    public double P50Micros { get; set; } = double.NaN;
    public double P99Micros { get; set; } = double.NaN;
    public double JitMethodsWhileTimed { get; set; }
}

/// <summary>
/// Latencies of one loop, without allocating while it runs: 1 µs buckets up to 4 ms, then 64 µs buckets up to about
/// 260 ms, the last bucket holding anything longer. Loops merge theirs at the end; percentiles by nearest rank.
/// </summary>
sealed class LatencyHistogram
{
    private const int Fine = 4096;
    private const int Coarse = 4096;
    private static readonly double s_ticksPerMicro = Stopwatch.Frequency / 1e6;
    private readonly long[] _counts = new long[Fine + Coarse];

    public void Record(long ticks)
    {
        long micros = (long)(ticks / s_ticksPerMicro);
        long bucket = micros < Fine ? micros : Math.Min(Fine + (micros - Fine) / 64, Fine + Coarse - 1);
        _counts[bucket]++;
    }

    public void Merge(LatencyHistogram other)
    {
        lock (this)
        {
            for (int i = 0; i < _counts.Length; i++)
            {
                _counts[i] += other._counts[i];
            }
        }
    }

    /// <summary>The latency (µs, a bucket's lower edge) below which <paramref name="percent"/> % of the samples fall; NaN without samples.</summary>
    public double Percentile(double percent)
    {
        long total = _counts.Sum();
        long rank = (long)Math.Ceiling(total * percent / 100);
        long seen = 0;
        for (int i = 0; i < _counts.Length; i++)
        {
            seen += _counts[i];
            if (seen >= rank && total > 0)
            {
                return i < Fine ? i : Fine + (i - Fine) * 64.0;
            }
        }
        return double.NaN;
    }
}

static partial class Child
{
    private const int Block = 4096;
    private const long Blocks = (1L << 30) / Block;
    private static long s_enters;
    private static MeterListener? s_listener;

    // The enters that submitted (the ring's internal count, read by reflection: the meter counts waits too).
    private static long Enters()
    {
        s_listener!.RecordObservableInstruments();
        return Volatile.Read(ref s_enters);
    }

    internal static int Run(string[] args)
    {
        string workload = args[0];
        bool auto = args[1] == "auto";
        string file = args[2];
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == "Spindle" && instrument.Name == "spindle.io_uring.enters")
            {
                l.EnableMeasurementEvents(instrument);
            }
        };
        listener.SetMeasurementEventCallback<long>((_, value, _, _) => Volatile.Write(ref s_enters, value)); // an observable counter: the total so far
        listener.Start();
        s_listener = listener;
        ThreadPool.SetMinThreads(Environment.ProcessorCount, Environment.ProcessorCount);
        SafeFileHandle handle = auto
            ? SpindleFile.OpenHandle(file, new SpindleFileOptions { Mode = FileMode.Open, Access = FileAccess.Read, DirectIO = true })
            : DirectIo.OpenHandle(file);
        Result result = workload switch
        {
            "qd" => Loops(handle, auto, int.Parse(args[3]), int.Parse(args[4]), double.Parse(args[5])),
            "sync" => SyncOverAsync(handle, auto, int.Parse(args[3]), double.Parse(args[4])),
            "batch" => Batches(handle, auto, int.Parse(args[3]), double.Parse(args[4])),
            "syncbatch" => Batches(handle, auto, int.Parse(args[3]), double.Parse(args[4]), waitSynchronously: true),
            "burst" => Bursts(handle, int.Parse(args[3]), int.Parse(args[4])),
            "idle" => AfterIdle(handle, auto, int.Parse(args[3]), double.Parse(args[4])),
            _ => throw new ArgumentException(workload),
        };
        Console.WriteLine(JsonSerializer.Serialize(result, Result.Json));
        return 0;
    }

    private static unsafe Memory<byte>[] Buffers(int count)
    {
        var buffers = new Memory<byte>[count];
        for (int i = 0; i < count; i++)
        {
            buffers[i] = AlignedMemoryPool.Shared.Rent(Block).Memory[..Block];
        }
        return buffers;
    }

    private static ValueTask<int> Read(SafeFileHandle handle, bool auto, Memory<byte> buffer, Random random)
    {
        long offset = random.NextInt64(Blocks) * Block;
        return auto ? SpindleRandomAccess.ReadAsync(handle, buffer, offset) : RandomAccess.ReadAsync(handle, buffer, offset);
    }

    private static void Spin(int micros)
    {
        if (micros == 0)
        {
            return;
        }
        long until = Stopwatch.GetTimestamp() + Stopwatch.Frequency * micros / 1_000_000;
        while (Stopwatch.GetTimestamp() < until)
        {
        }
    }

    // Measures a window: warm-up first, then counters around the timed part. The warm-up is repeated until a whole
    // pass compiled no method (at most 20 passes): a window that overlaps the runtime's tier-up measures the JIT, not the
    // I/O (at one in flight it went on for about 2 s of a child's run), and Spindle, not precompiled as the runtime's own
    // code is, has more of it.
    private static Result Measure(Func<long> warm, Func<(long Ops, double WorstMs)> timed, LatencyHistogram? latencies = null)
    {
        for (int pass = 0; pass < 20; pass++)
        {
            long compiled = System.Runtime.JitInfo.GetCompiledMethodCount();
            warm();
            if (System.Runtime.JitInfo.GetCompiledMethodCount() == compiled)
            {
                break;
            }
        }
        long compiledBefore = System.Runtime.JitInfo.GetCompiledMethodCount();
        Usage before = Usage.Now();
        long enters = Enters();
        long start = Stopwatch.GetTimestamp();
        var (ops, worst) = timed();
        double elapsed = Stopwatch.GetElapsedTime(start).TotalSeconds;
        Usage after = Usage.Now();
        return new Result
        {
            OpsPerSecond = ops / elapsed,
            CpuMicrosPerOp = (after.CpuMicros - before.CpuMicros) / ops,
            SwitchesPerOp = (double)(after.Switches - before.Switches) / ops,
            EntersPerOp = (double)(Enters() - enters) / ops,
            WorstWaitMs = worst,
            P50Micros = latencies?.Percentile(50) ?? double.NaN,
            P99Micros = latencies?.Percentile(99) ?? double.NaN,
            JitMethodsWhileTimed = System.Runtime.JitInfo.GetCompiledMethodCount() - compiledBefore,
        };
    }

    private static Result Loops(SafeFileHandle handle, bool auto, int depth, int workMicros, double seconds)
    {
        Memory<byte>[] buffers = Buffers(depth);
        var recorded = new LatencyHistogram(); // the timed window's latencies, not the warm-up's
        (long, double) RunFor(double s, LatencyHistogram? merged)
        {
            long deadline = Stopwatch.GetTimestamp() + (long)(s * Stopwatch.Frequency);
            long ops = 0;
            long worst = 0;
            var loops = new Task[depth];
            for (int i = 0; i < depth; i++)
            {
                Memory<byte> buffer = buffers[i];
                loops[i] = Task.Run(async () =>
                {
                    var random = new Random();
                    var histogram = new LatencyHistogram();
                    long n = 0;
                    long w = 0;
                    while (Stopwatch.GetTimestamp() < deadline)
                    {
                        long t = Stopwatch.GetTimestamp();
                        await Read(handle, auto, buffer, random);
                        long waited = Stopwatch.GetTimestamp() - t;
                        w = Math.Max(w, waited);
                        histogram.Record(waited);
                        Spin(workMicros);
                        n++;
                    }
                    Interlocked.Add(ref ops, n);
                    InterlockedMax(ref worst, w);
                    merged?.Merge(histogram);
                });
            }
            Task.WaitAll(loops);
            return (ops, worst * 1000.0 / Stopwatch.Frequency);
        }
        return Measure(() => RunFor(0.5, null).Item1, () => RunFor(seconds, recorded), recorded);
    }

    // Bursts of 64 reads per loop, each after 2 ms with nothing in flight (a server between requests): p50 and p99 are
    // those of the first read of each loop in a burst, the one that finds the ring idle; ops/s counts every read.
    private static Result AfterIdle(SafeFileHandle handle, bool auto, int depth, double seconds)
    {
        const int ReadsPerLoop = 64;
        Memory<byte>[] buffers = Buffers(depth);
        var recorded = new LatencyHistogram();
        (long, double) RunFor(double s, LatencyHistogram? merged)
        {
            long deadline = Stopwatch.GetTimestamp() + (long)(s * Stopwatch.Frequency);
            long ops = 0;
            long worst = 0;
            var loops = new Task[depth];
            var first = new LatencyHistogram();
            while (Stopwatch.GetTimestamp() < deadline)
            {
                Thread.Sleep(2);
                for (int i = 0; i < depth; i++)
                {
                    Memory<byte> buffer = buffers[i];
                    loops[i] = Task.Run(async () =>
                    {
                        var random = new Random();
                        for (int n = 0; n < ReadsPerLoop; n++)
                        {
                            long t = Stopwatch.GetTimestamp();
                            await Read(handle, auto, buffer, random);
                            if (n == 0)
                            {
                                long waited = Stopwatch.GetTimestamp() - t;
                                lock (first)
                                {
                                    first.Record(waited);
                                }
                                InterlockedMax(ref worst, waited);
                            }
                        }
                    });
                }
                Task.WaitAll(loops);
                ops += depth * ReadsPerLoop;
            }
            merged?.Merge(first);
            return (ops, worst * 1000.0 / Stopwatch.Frequency);
        }
        return Measure(() => RunFor(0.5, null).Item1, () => RunFor(seconds, recorded), recorded);
    }

    private static void InterlockedMax(ref long target, long value)
    {
        long current;
        while ((current = Volatile.Read(ref target)) < value && Interlocked.CompareExchange(ref target, value, current) != current)
        {
        }
    }

    private static Result SyncOverAsync(SafeFileHandle handle, bool auto, int threads, double seconds)
    {
        Memory<byte>[] buffers = Buffers(threads);
        ThreadPool.SetMinThreads(threads + 4, threads + 4);
        (long, double) RunFor(double s)
        {
            long deadline = Stopwatch.GetTimestamp() + (long)(s * Stopwatch.Frequency);
            long ops = 0;
            long worst = 0;
            using var done = new CountdownEvent(threads);
            for (int i = 0; i < threads; i++)
            {
                Memory<byte> buffer = buffers[i];
                ThreadPool.UnsafeQueueUserWorkItem(_ =>
                {
                    var random = new Random();
                    long n = 0;
                    long w = 0;
                    while (Stopwatch.GetTimestamp() < deadline)
                    {
                        long t = Stopwatch.GetTimestamp();
                        // Spindle's ValueTask blocks in GetResult; System.IO's throws there (InvalidOperationException), so it goes through a Task.
                        if (auto)
                        {
                            Read(handle, auto, buffer, random).GetAwaiter().GetResult();
                        }
                        else
                        {
                            Read(handle, auto, buffer, random).AsTask().GetAwaiter().GetResult();
                        }
                        w = Math.Max(w, Stopwatch.GetTimestamp() - t);
                        n++;
                    }
                    Interlocked.Add(ref ops, n);
                    InterlockedMax(ref worst, w);
                    done.Signal();
                }, null);
            }
            done.Wait();
            return (ops, worst * 1000.0 / Stopwatch.Frequency);
        }
        return Measure(() => RunFor(0.5).Item1, () => RunFor(seconds));
    }

    // waitSynchronously: one thread blocks in GetResult on each batch (sync-over-async) instead of awaiting it.
    private static Result Batches(SafeFileHandle handle, bool auto, int size, double seconds, bool waitSynchronously = false)
    {
        Memory<byte>[] buffers = Buffers(size);
        var requests = new BatchReadRequest[size];
        var results = new BatchReadResult[size];
        var tasks = new Task<int>[size];
        var random = new Random();
        (long, double) RunFor(double s)
        {
            long deadline = Stopwatch.GetTimestamp() + (long)(s * Stopwatch.Frequency);
            long ops = 0;
            long worst = 0;
            Task.Run(async () =>
            {
                while (Stopwatch.GetTimestamp() < deadline)
                {
                    long t = Stopwatch.GetTimestamp();
                    if (auto)
                    {
                        for (int i = 0; i < size; i++)
                        {
                            requests[i] = new BatchReadRequest(handle, buffers[i], random.NextInt64(Blocks) * Block);
                        }
                        ValueTask batch = SpindleRandomAccess.ReadBatchAsync(requests, results);
                        if (waitSynchronously)
                        {
                            batch.GetAwaiter().GetResult();
                        }
                        else
                        {
                            await batch;
                        }
                    }
                    else
                    {
                        for (int i = 0; i < size; i++)
                        {
                            tasks[i] = RandomAccess.ReadAsync(handle, buffers[i], random.NextInt64(Blocks) * Block).AsTask();
                        }
                        if (waitSynchronously)
                        {
                            Task.WhenAll(tasks).GetAwaiter().GetResult();
                        }
                        else
                        {
                            await Task.WhenAll(tasks);
                        }
                    }
                    worst = Math.Max(worst, Stopwatch.GetTimestamp() - t);
                    ops += size;
                }
            }).Wait();
            return (ops, worst * 1000.0 / Stopwatch.Frequency);
        }
        return Measure(() => RunFor(0.5).Item1, () => RunFor(seconds));
    }

    private static Result Bursts(SafeFileHandle handle, int size, int times)
    {
        Memory<byte>[] buffers = Buffers(size);
        var tasks = new ValueTask<int>[size];
        var random = new Random();
        (long, double) Run(int count)
        {
            for (int b = 0; b < count; b++)
            {
                for (int i = 0; i < size; i++)
                {
                    tasks[i] = Read(handle, auto: true, buffers[i], random);
                }
                Task.Run(async () =>
                {
                    for (int i = 0; i < size; i++)
                    {
                        await tasks[i];
                    }
                }).Wait();
            }
            return ((long)count * size, 0);
        }
        return Measure(() => Run(2).Item1, () => Run(times));
    }

    private readonly record struct Usage(double CpuMicros, long Switches)
    {
        internal static Usage Now()
        {
            GetRusage(0, out Rusage u);
            return new Usage((u.UserSeconds + u.SystemSeconds) * 1e6 + u.UserMicroseconds + u.SystemMicroseconds, u.VoluntarySwitches + u.InvoluntarySwitches);
        }
    }

    // struct rusage on 64-bit Linux: two struct timeval, then 14 longs; ru_nvcsw and ru_nivcsw are the last two.
    [StructLayout(LayoutKind.Sequential)]
    private unsafe struct Rusage
    {
        public long UserSeconds;
        public long UserMicroseconds;
        public long SystemSeconds;
        public long SystemMicroseconds;
        private fixed long _rest[12];
        public long VoluntarySwitches;
        public long InvoluntarySwitches;
    }

    [LibraryImport("libc", EntryPoint = "getrusage")]
    private static partial int GetRusage(int who, out Rusage usage);
}
