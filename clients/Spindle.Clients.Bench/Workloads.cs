using System.Diagnostics;
using FASTER.core;
using LiteDB;
using Microsoft.Win32.SafeHandles;
using Spindle.Clients.Probe;
using ZoneTree.Options;

namespace Spindle.Clients.Bench;

/// <summary>One row: a client's own workload, run on Spindle (<c>onSpindle</c>) or on the client's Linux default.</summary>
internal sealed record Workload(string Name, string Baseline, Goal Goal, Func<string, bool, Measurement> Run);

/// <summary>A row's goal: Spindle's operations per second at least <paramref name="Ratio"/> times the baseline's, and where asked, a lower p99 latency.</summary>
internal sealed record Goal(double Ratio, bool P99Lower = false)
{
    public static readonly Goal TwiceAndP99Lower = new(2, P99Lower: true);

    public bool IsMetBy(double ratio, double? baselineP99, double? spindleP99) => ratio >= Ratio && (!P99Lower || spindleP99 < baselineP99);

    public override string ToString() => string.Create(System.Globalization.CultureInfo.InvariantCulture, $"≥ {Ratio:0.0#}×{(P99Lower ? ", p99 lower" : "")}");
}

/// <summary>The rows of issue 13, sized by --quick.</summary>
internal static class Workloads
{
    private const string FasterBaseline = "ManagedLocalStorageDevice";

    public static IEnumerable<Workload> All(BenchSettings settings)
    {
        bool quick = settings.Quick;
        // SpindleDevice as users get it (page cache, like the baseline's files: .NET ignores its
        // FILE_FLAG_NO_BUFFERING on Linux), and with DirectIO on, as the issue first asked for it.
        foreach (bool direct in new[] { false, true })
        {
            string suffix = direct ? " [SpindleDevice DirectIO on]" : "";
            yield return new("FasterLog 100 B, commit every entry" + suffix, FasterBaseline, new Goal(2), (d, s) => FasterLogEveryEntry(d, s, direct, 100, quick ? 1_000 : 5_000));
            yield return new("FasterLog 4 KiB, commit every entry" + suffix, FasterBaseline, new Goal(2), (d, s) => FasterLogEveryEntry(d, s, direct, 4096, quick ? 1_000 : 5_000));
            yield return new("FasterLog 100 B, commit every 1 ms" + suffix, FasterBaseline, new Goal(2), (d, s) => FasterLogTimedCommit(d, s, direct, 100, quick ? 200_000 : 1_000_000));
            yield return new("FasterLog 4 KiB, commit every 1 ms" + suffix, FasterBaseline, new Goal(2), (d, s) => FasterLogTimedCommit(d, s, direct, 4096, quick ? 10_000 : 50_000));
            int kvKeys = quick ? 4_096 : 16_384; // 4 KiB values: 16 MiB quick, 64 MiB full; memory a quarter
            yield return new("FasterKV 4 KiB reads, uniform, 32 sessions" + suffix, FasterBaseline, Goal.TwiceAndP99Lower, (d, s) => FasterKvReads(d, s, direct, kvKeys, zipf: false, quick ? 500 : 2_000));
            yield return new("FasterKV 4 KiB reads, Zipf 0.99, 32 sessions" + suffix, FasterBaseline, Goal.TwiceAndP99Lower, (d, s) => FasterKvReads(d, s, direct, kvKeys, zipf: true, quick ? 500 : 2_000));
        }
        // Durable writes: FASTER's write-through (O_SYNC) against each write made durable with RWF_DSYNC, both on Spindle.
        yield return new("FasterLog 100 B, commit every entry [SpindleDevice DataSyncWrites vs O_SYNC]", "SpindleDevice O_SYNC", new Goal(1.0),
            (d, s) => FasterLogEveryEntry(d, onSpindle: true, direct: false, 100, quick ? 1_000 : 5_000, dataSyncWrites: s));
        // 32 writers, each record durable before its writer goes on: FasterLog committing every entry on its Linux
        // default device, against AppendLog's group commit.
        yield return new("32 writers, 100 B durable records: AppendLogWriter vs FasterLog commit every entry", FasterBaseline, new Goal(1.0),
            (d, s) => DurableWriters(d, s, writers: 32, quick ? 100 : 400));
        int treeKeys = quick ? 100_000 : 1_000_000;
        yield return new($"ZoneTree bulk insert {treeKeys:N0} keys", "LocalFileStreamProvider", new Goal(1.2), (d, s) => ZoneTreeInsert(d, s, treeKeys));
        yield return new($"ZoneTree random reads ({treeKeys:N0} keys on disk)", "LocalFileStreamProvider", new Goal(1.2), (d, s) => ZoneTreeReads(d, s, treeKeys));
        int documents = quick ? 5_000 : 100_000;
        yield return new($"LiteDB insert {documents:N0} documents, indexed", "FileStream", new Goal(1.0), (d, s) => LiteDbInserts(d, s, documents));
        yield return new("LiteDB indexed queries", "FileStream", new Goal(1.0), (d, s) => LiteDbQueries(d, s, documents, quick ? 2_000 : 10_000));
        foreach (Workload web in WebWorkloads.All(settings))
        {
            yield return web;
        }
    }

    private static IoEngine? EngineFor(bool onSpindle) => onSpindle ? IoEngine.Auto : null;

    private static Measurement DurableWriters(string directory, bool onSpindle, int writers, int recordsPerWriter)
    {
        byte[] record = new byte[100];
        RunClock clock;
        if (onSpindle)
        {
            using SafeFileHandle handle = SpindleFile.OpenHandle(Path.Combine(directory, "group.log"), new SpindleFileOptions
            {
                Mode = FileMode.Create, Access = FileAccess.Write, AtomicAppend = true,
            });
            var writer = new AppendLogWriter(handle);
            clock = RunClock.Start();
            Task.WaitAll(Enumerable.Range(0, writers).Select(_ => Task.Run(async () =>
            {
                for (int i = 0; i < recordsPerWriter; i++)
                {
                    await writer.AppendDurableAsync(record);
                }
            })).ToArray());
            clock.Stop();
            return clock.Result((long)writers * recordsPerWriter);
        }
        var (log, device) = FasterLogs.Open(directory, engine: null);
        clock = RunClock.Start();
        Task.WaitAll(Enumerable.Range(0, writers).Select(_ => Task.Run(async () =>
        {
            for (int i = 0; i < recordsPerWriter; i++)
            {
                log.Enqueue(record);
                await log.CommitAsync();
            }
        })).ToArray());
        clock.Stop();
        log.Dispose();
        device.Dispose();
        return clock.Result((long)writers * recordsPerWriter);
    }

    private static Measurement FasterLogEveryEntry(string directory, bool onSpindle, bool direct, int size, int entries, bool dataSyncWrites = false)
    {
        var (log, device) = FasterLogs.Open(directory, EngineFor(onSpindle), directIO: direct, dataSyncWrites: dataSyncWrites);
        byte[] entry = new byte[size];
        var clock = RunClock.Start();
        for (int i = 0; i < entries; i++)
        {
            log.Enqueue(entry);
            log.Commit(spinWait: true);
        }
        clock.Stop();
        log.Dispose();
        device.Dispose();
        return clock.Result(entries);
    }

    private static Measurement FasterLogTimedCommit(string directory, bool onSpindle, bool direct, int size, int entries)
    {
        var (log, device) = FasterLogs.Open(directory, EngineFor(onSpindle), pageSizeBits: 20, memorySizeBits: 24, segmentSizeBits: 28, directIO: direct);
        byte[] entry = new byte[size];
        long commitEvery = Stopwatch.Frequency / 1000;
        var clock = RunClock.Start();
        long lastCommit = clock.ElapsedTicks;
        for (int i = 0; i < entries; i++)
        {
            log.Enqueue(entry);
            if (clock.ElapsedTicks - lastCommit >= commitEvery)
            {
                log.Commit(spinWait: false);
                lastCommit = clock.ElapsedTicks;
            }
        }
        log.Commit(spinWait: true);
        clock.Stop();
        log.Dispose();
        device.Dispose();
        return clock.Result(entries);
    }

    private static Measurement FasterKvReads(string directory, bool onSpindle, bool direct, int keys, bool zipf, int readsPerSession)
    {
        const int Sessions = 32;
        long dataBytes = (long)keys * (Value4K.Size + 16);
        int memoryBits = 63 - (int)long.LeadingZeroCount(dataBytes / 4); // a quarter of the data, rounded down to a power of two
        var (store, device) = FasterStores.Open<Value4K>(directory, EngineFor(onSpindle), memoryBits, pageSizeBits: 16, segmentSizeBits: 26, indexBuckets: 1L << 15, directIO: direct);
        using (var loader = store.For(new SimpleFunctions<long, Value4K>()).NewSession<SimpleFunctions<long, Value4K>>())
        {
            var value = default(Value4K);
            for (long key = 0; key < keys; key++)
            {
                value.Stamp(key);
                loader.Upsert(key, value);
            }
            loader.CompletePending(wait: true);
        }
        var sampler = new KeySampler(keys, zipf ? 0.99 : 0);
        var latencies = new long[Sessions * readsPerSession];
        var threads = new Thread[Sessions];
        using var start = new Barrier(Sessions + 1);
        for (int t = 0; t < Sessions; t++)
        {
            int index = t;
            threads[t] = new Thread(() =>
            {
                var random = new Random(index);
                using var session = store.For(new SimpleFunctions<long, Value4K>()).NewSession<SimpleFunctions<long, Value4K>>();
                start.SignalAndWait();
                for (int r = 0; r < readsPerSession; r++)
                {
                    long key = sampler.Next(random);
                    long began = Stopwatch.GetTimestamp();
                    var (status, _) = session.Read(key);
                    if (status.IsPending)
                    {
                        session.CompletePending(wait: true);
                    }
                    latencies[(index * readsPerSession) + r] = Stopwatch.GetTimestamp() - began;
                }
            });
            threads[t].Start();
        }
        start.SignalAndWait();
        var clock = RunClock.Start();
        foreach (Thread thread in threads)
        {
            thread.Join();
        }
        clock.Stop();
        store.Dispose();
        device.Dispose();
        Array.Sort(latencies);
        double p99 = latencies[(int)(latencies.Length * 0.99)] * 1e6 / Stopwatch.Frequency;
        return clock.Result(latencies.Length, p99);
    }

    private static Measurement ZoneTreeInsert(string directory, bool onSpindle, int keys)
    {
        var clock = RunClock.Start();
        using (var tree = ZoneTrees.Open(directory, EngineFor(onSpindle), WriteAheadLogMode.Sync, mutableSegmentMaxItemCount: 100_000))
        {
            for (int key = 0; key < keys; key++)
            {
                tree.Upsert(Scramble(key, keys), ZoneTreeKeys.ValueOf(key));
            }
            tree.Maintenance.MoveMutableSegmentForward();
            tree.Maintenance.StartMergeOperation()?.Join();
        }
        clock.Stop();
        return clock.Result(keys);
    }

    private static Measurement ZoneTreeReads(string directory, bool onSpindle, int keys)
    {
        using (var tree = ZoneTrees.Open(directory, EngineFor(onSpindle), WriteAheadLogMode.None, mutableSegmentMaxItemCount: 100_000))
        {
            for (int key = 0; key < keys; key++)
            {
                tree.Upsert(key, ZoneTreeKeys.ValueOf(key));
            }
            tree.Maintenance.MoveMutableSegmentForward();
            tree.Maintenance.StartMergeOperation()?.Join();
            tree.Maintenance.SaveMetaData();
        }
        int reads = keys / 2;
        var random = new Random(7);
        var clock = RunClock.Start();
        using (var tree = ZoneTrees.Open(directory, EngineFor(onSpindle), WriteAheadLogMode.None, mutableSegmentMaxItemCount: 100_000))
        {
            for (int i = 0; i < reads; i++)
            {
                int key = random.Next(keys);
                if (!tree.TryGet(key, out int value) || value != ZoneTreeKeys.ValueOf(key))
                {
                    throw new InvalidOperationException($"key {key} read wrong");
                }
            }
        }
        clock.Stop();
        return clock.Result(reads);
    }

    private static Measurement LiteDbInserts(string directory, bool onSpindle, int documents)
    {
        var clock = RunClock.Start();
        using (var streams = LiteDbStreams.Open(Path.Combine(directory, "bench.db"), onSpindle))
        using (var db = new LiteDatabase(streams.Data, logStream: streams.Log))
        {
            var people = db.GetCollection("people");
            people.EnsureIndex("age");
            for (int id = 1; id <= documents; id++)
            {
                people.Insert(new BsonDocument { ["_id"] = id, ["age"] = id % 97, ["name"] = $"person-{id}" });
            }
        }
        clock.Stop();
        return clock.Result(documents);
    }

    private static Measurement LiteDbQueries(string directory, bool onSpindle, int documents, int queries)
    {
        string path = Path.Combine(directory, "bench.db");
        using (var streams = LiteDbStreams.Open(path, onSpindle))
        using (var db = new LiteDatabase(streams.Data, logStream: streams.Log))
        {
            var people = db.GetCollection("people");
            people.EnsureIndex("age");
            people.InsertBulk(Enumerable.Range(1, documents).Select(id => new BsonDocument { ["_id"] = id, ["age"] = id % 997, ["name"] = $"person-{id}" }));
            db.Checkpoint();
        }
        var random = new Random(3);
        var clock = RunClock.Start();
        using (var streams = LiteDbStreams.Open(path, onSpindle, create: false))
        using (var db = new LiteDatabase(streams.Data, logStream: streams.Log))
        {
            var people = db.GetCollection("people");
            for (int q = 0; q < queries; q++)
            {
                int age = random.Next(997);
                if (people.Find(Query.EQ("age", age)).Count() == 0)
                {
                    throw new InvalidOperationException($"no document of age {age}");
                }
            }
        }
        clock.Stop();
        return clock.Result(queries);
    }

    /// <summary>A bijection of [0, n) that spreads neighbouring keys, so inserts arrive out of order.</summary>
    private static int Scramble(int key, int n) => (int)((long)key * 2_654_435_761L % n); // the multiplier is prime: a bijection for any n it does not divide
}

/// <summary>Wall-clock time and the process's CPU time of one measured phase.</summary>
internal sealed class RunClock
{
    private readonly Stopwatch _wall = Stopwatch.StartNew();
    private readonly TimeSpan _cpuAtStart = Process.GetCurrentProcess().TotalProcessorTime;
    private TimeSpan _cpu;

    private RunClock()
    {
    }

    public long ElapsedTicks => _wall.ElapsedTicks;

    public static RunClock Start() => new();

    public void Stop()
    {
        _wall.Stop();
        _cpu = Process.GetCurrentProcess().TotalProcessorTime - _cpuAtStart; // every thread: the client's, the engine's, the kernel time they spent
    }

    public Measurement Result(long operations, double? p99Microseconds = null)
        => new(operations, _wall.Elapsed.TotalSeconds, p99Microseconds, _cpu.TotalSeconds);
}

/// <summary>The data and log streams LiteDB gets: FileStream, or SpindleFileStream on the process engine.</summary>
internal sealed class LiteDbStreams : IDisposable
{
    private LiteDbStreams(Stream data, Stream log)
    {
        Data = data;
        Log = log;
    }

    public Stream Data { get; }

    public Stream Log { get; }

    public static LiteDbStreams Open(string path, bool onSpindle, bool create = true)
    {
        FileMode mode = create ? FileMode.CreateNew : FileMode.Open;
        if (onSpindle)
        {
            var options = new SpindleFileOptions { Mode = mode, Access = FileAccess.ReadWrite, BufferSize = 8192, Options = FileOptions.RandomAccess };
            return new LiteDbStreams(new SpindleFileStream(path, options), new SpindleFileStream(path + "-log", new SpindleFileOptions { Mode = FileMode.OpenOrCreate, Access = FileAccess.ReadWrite, BufferSize = 8192, Options = FileOptions.RandomAccess }));
        }
        return new LiteDbStreams(
            new FileStream(path, mode, FileAccess.ReadWrite, FileShare.None, 8192, FileOptions.RandomAccess),
            new FileStream(path + "-log", FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.None, 8192, FileOptions.RandomAccess));
    }

    public void Dispose()
    {
        Log.Dispose();
        Data.Dispose();
    }
}

/// <summary>A 4 KiB value FASTER stores inline (blittable).</summary>
internal unsafe struct Value4K
{
    public const int Size = 4096;
    private fixed byte _bytes[Size];

    public void Stamp(long key)
    {
        fixed (byte* bytes = _bytes)
        {
            *(long*)bytes = key;
        }
    }
}

/// <summary>Uniform or Zipf-distributed keys (hot keys scattered over the key space).</summary>
internal sealed class KeySampler
{
    private readonly double[]? _cumulative; // Zipf: P(rank ≤ i), null for uniform
    private readonly int _keys;

    public KeySampler(int keys, double theta)
    {
        _keys = keys;
        if (theta > 0)
        {
            _cumulative = new double[keys];
            double sum = 0;
            for (int i = 0; i < keys; i++)
            {
                sum += 1 / Math.Pow(i + 1, theta);
                _cumulative[i] = sum;
            }
            for (int i = 0; i < keys; i++)
            {
                _cumulative[i] /= sum;
            }
        }
    }

    public long Next(Random random)
    {
        if (_cumulative is null)
        {
            return random.Next(_keys);
        }
        int rank = Array.BinarySearch(_cumulative, random.NextDouble());
        rank = rank < 0 ? ~rank : rank;
        rank = Math.Min(rank, _keys - 1);
        return (long)((ulong)rank * 11_400_714_819_323_198_485UL % (ulong)_keys);
    }
}
