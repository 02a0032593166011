using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Tests.Infrastructure;
using Xunit.Abstractions;

namespace Spindle.Tests.Reliability.Faults;

/// <summary>
/// A process out of file descriptors (a lowered <c>RLIMIT_NOFILE</c>, filled with <c>dup</c>s in a child
/// process, with 0, 1 or 2 left free) at its first Spindle I/O: after a Spindle open, or before any
/// Spindle code ran at all. I/O on handles already open works as System.IO's does (it needs no
/// descriptor), an open fails with System.IO's EMFILE exception for that call only, and once
/// descriptors are free again everything works, io_uring included. Before any Spindle code ran, a
/// call that needs Spindle's engines (asynchronous I/O, a stream) may instead fail alone with EMFILE
/// (Spindle could not load their assemblies yet).
/// </summary>
[Collection(SerialReliability.Name)]
public class DescriptorExhaustionTests(ITestOutputHelper output)
{
    private const string Emfile = "IOException hr=24";

    [Theory]
    [InlineData("after-open", 0)]
    [InlineData("after-open", 1)]
    [InlineData("after-open", 2)]
    [InlineData("first-call", 0)]
    [InlineData("first-call", 1)]
    [InlineData("first-call", 2)]
    public async Task Running_out_of_descriptors_fails_only_the_calls_that_need_one(string when, int free)
    {
        (int code, string text) = await Task.Run(() => ChildProcess.Run(typeof(DescriptorExhaustionTests), nameof(ChildExhaustsDescriptors), null,
            when, free.ToString(), SpindleRandomAccess.IsIoUringAvailable.ToString())).WaitAsync(TimeSpan.FromSeconds(90));
        output.WriteLine(text);
        Assert.True(code == 0, text);
        // Each line compares what Spindle did with what System.IO did for the same call.
        string[] lines = text.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        Assert.Contains(lines, line => line.StartsWith("exhausted:"));
        foreach (string line in lines.Where(l => l.Contains(" System.IO ")))
        {
            string[] sides = line.Split(" System.IO ");
            bool same = sides[0].EndsWith(": " + sides[1]);
            // Before any Spindle code ran, what needs Spindle's engines may fail alone with EMFILE.
            bool failedAlone = when == "first-call" && line.StartsWith("during") && sides[0].EndsWith(": " + Emfile);
            Assert.True(same || failedAlone, line);
        }
        Assert.Contains("file after: ok", text);
        Assert.Contains("io_uring after: ok", text);
        Assert.Contains("meter after: ok", text);
        if (when == "after-open" && free == 0 && SpindleRandomAccess.IsIoUringAvailable)
        {
            // io_uring could not start (no descriptor for the ring): the calls ran on the pool, counted as fallbacks.
            Assert.DoesNotContain("fallbacks during: 0", text);
        }
    }

    [Fact]
    public async Task A_write_only_direct_stream_short_of_a_descriptor_reports_EMFILE_like_System_IO_and_keeps_the_file()
    {
        if (await RunChildAsync(nameof(ChildWritesWriteOnlyDirectStream)) is not string text)
        {
            return;
        }
        // The stream must reopen its file for reading to fill the rest of a partly written block.
        Assert.Contains("System.IO open: IOException hr=24", text);
        Assert.Contains("Spindle write: IOException hr=24", text);
        Assert.Contains("write after: =ok", text);
        Assert.Contains("file: 8192 bytes, as expected", text);
    }

    // A thread's first synchronous batch needs a descriptor for its own ring. With none free the batch reads one request
    // after the other (right results), and once descriptors are free again the next thread gets its ring: running out
    // for a moment must not turn the ring off for the rest of the process.
    [Fact]
    public async Task A_synchronous_batch_short_of_a_descriptor_for_its_ring_reads_alone_and_a_later_one_gets_the_ring()
    {
        if (await RunChildAsync(nameof(ChildBatchesWithoutDescriptors)) is not string text)
        {
            return;
        }
        Assert.Contains("during: 4096 4096, ring False", text);
        Assert.Contains("after: 4096 4096, ring True", text);
    }

    // Threads that come and go, each reading one synchronous O_DIRECT batch through a ring (a thread per connection, a
    // pool that grows and shrinks): the io_uring descriptors open stay bounded by the batches running at once plus the
    // idle rings kept, at most one per processor, with no garbage collection asked for. Before, each thread's ring
    // stayed open until a collection ran its finalizer.
    [Fact]
    public async Task Threads_that_come_and_go_each_reading_a_batch_leave_no_rings_behind()
    {
        if (await RunChildAsync(nameof(ChildThreadsReadBatches), "600", "4", "0") is not string text)
        {
            return;
        }
        AssertRingsBounded(text, threads: 600, atOnce: 4);
    }

    // The same under a limit of 1,024 descriptors (`ulimit -n 1024`): 2,000 threads, one after the other, each read their
    // batch through a ring. Before, the process ran out of descriptors after about 1,000 threads.
    [Fact]
    public async Task Two_thousand_threads_each_reading_a_batch_run_under_a_limit_of_1024_descriptors()
    {
        if (await RunChildAsync(nameof(ChildThreadsReadBatches), "2000", "1", "1024") is not string text)
        {
            return;
        }
        AssertRingsBounded(text, threads: 2000, atOnce: 1);
    }

    private static void AssertRingsBounded(string text, int threads, int atOnce)
    {
        Dictionary<string, long> figures = text.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)
            .Where(line => line.Contains(": "))
            .Select(line => line.Split(": "))
            .Where(parts => long.TryParse(parts[1], out _))
            .ToDictionary(parts => parts[0], parts => long.Parse(parts[1]));
        Assert.Equal(threads, figures["threads done"]);
        Assert.Equal(0, figures["wrong results"]);
        Assert.Equal(threads, figures["batches through a ring"]);
        Assert.InRange(figures["most io_uring descriptors"] - figures["io_uring descriptors before"], 1, atOnce + Environment.ProcessorCount);
    }

    /// <summary>
    /// Child: threads started <c>args[1]</c> at a time and joined, <c>args[0]</c> in all, each reading one synchronous batch
    /// of 8 O_DIRECT reads, under a descriptor limit of <c>args[2]</c> (0: as inherited); prints the io_uring
    /// descriptors open before and at most (counted after each round of threads), and the results.
    /// </summary>
    public static int ChildThreadsReadBatches(string[] args)
    {
        int threads = int.Parse(args[0]), atOnce = int.Parse(args[1]), limit = int.Parse(args[2]);
        if (limit > 0)
        {
            LowerLimit(limit);
        }
        string dir = Path.Combine(AppContext.BaseDirectory, "spindle-tests-" + Guid.NewGuid().ToString("N")); // a disk: O_DIRECT
        Directory.CreateDirectory(dir);
        try
        {
            string path = Path.Combine(dir, "direct");
            byte[] data = Enumerable.Range(0, 65536).Select(i => (byte)(i * 7)).ToArray();
            File.WriteAllBytes(path, data);
            using SafeFileHandle handle = SpindleFile.OpenHandle(path, new SpindleFileOptions { Mode = FileMode.Open, Access = FileAccess.Read, DirectIO = true });
            if (!SpindleRandomAccess.IsIoUringAvailable || Spindle.Engines.FastPath.HandleFacts.Of(handle).SynchronousBackend)
            {
                Console.WriteLine("skipped: no io_uring, or memory-backed storage (read inline)");
                return 0;
            }
            int before = RingDescriptors(), most = before, done = 0, wrong = 0, throughRing = 0;
            int collections = GC.CollectionCount(0);
            for (int started = 0; started < threads; started += atOnce)
            {
                var round = new List<Thread>();
                for (int t = 0; t < atOnce && started + t < threads; t++)
                {
                    round.Add(new Thread(() =>
                    {
                        using System.Buffers.IMemoryOwner<byte> owner = AlignedMemoryPool.Shared.Rent(8 * 4096);
                        var requests = new BatchReadRequest[8];
                        for (int i = 0; i < requests.Length; i++)
                        {
                            requests[i] = new BatchReadRequest(handle, owner.Memory.Slice(i * 4096, 4096), (i * 5 % 16) * 4096L);
                        }
                        var results = new BatchReadResult[requests.Length];
                        SpindleRandomAccess.ReadBatch(requests, results);
                        bool right = Enumerable.Range(0, requests.Length).All(i => results[i].BytesRead == 4096
                            && requests[i].Buffer.Span.SequenceEqual(data.AsSpan((int)requests[i].FileOffset, 4096)));
                        Interlocked.Add(ref wrong, right ? 0 : 1);
                        Interlocked.Add(ref throughRing, EngineCounts.RoundsOnThisThread > 0 ? 1 : 0);
                        Interlocked.Increment(ref done);
                    }));
                }
                round.ForEach(thread => thread.Start());
                round.ForEach(thread => thread.Join());
                most = Math.Max(most, RingDescriptors());
            }
            Console.WriteLine($"threads done: {done}");
            Console.WriteLine($"wrong results: {wrong}");
            Console.WriteLine($"batches through a ring: {throughRing}");
            Console.WriteLine($"io_uring descriptors before: {before}");
            Console.WriteLine($"most io_uring descriptors: {most}");
            Console.WriteLine($"garbage collections meanwhile: {GC.CollectionCount(0) - collections}");
            return 0;
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    private static int RingDescriptors()
    {
        int count = 0;
        foreach (string fd in Directory.GetFiles("/proc/self/fd"))
        {
            try
            {
                count += new FileInfo(fd).LinkTarget == "anon_inode:[io_uring]" ? 1 : 0;
            }
            catch (IOException)
            {
                // closed since it was listed
            }
        }
        return count;
    }

    // Runs a child of this class that takes no arguments; its output, or null when it printed that it skipped.
    private async Task<string?> RunChildAsync(string child, params string[] args)
    {
        (int code, string text) = await Task.Run(() => ChildProcess.Run(typeof(DescriptorExhaustionTests), child, null, args)).WaitAsync(TimeSpan.FromSeconds(90));
        output.WriteLine(text);
        Assert.True(code == 0, text);
        return text.Contains("skipped:") ? null : text;
    }

    /// <summary>Child: a synchronous O_DIRECT batch on a new thread with no descriptor free, then on another with some.</summary>
    public static int ChildBatchesWithoutDescriptors(string[] args)
    {
        string dir = Path.Combine(AppContext.BaseDirectory, "spindle-tests-" + Guid.NewGuid().ToString("N")); // a disk: O_DIRECT
        Directory.CreateDirectory(dir);
        try
        {
            string path = Path.Combine(dir, "direct");
            File.WriteAllBytes(path, Enumerable.Range(0, 65536).Select(i => (byte)i).ToArray());
            using SafeFileHandle handle = SpindleFile.OpenHandle(path, new SpindleFileOptions { Mode = FileMode.Open, Access = FileAccess.Read, DirectIO = true });
            if (!SpindleRandomAccess.IsIoUringAvailable || Spindle.Engines.FastPath.HandleFacts.Of(handle).SynchronousBackend)
            {
                Console.WriteLine("skipped: no io_uring, or memory-backed storage (read inline)");
                return 0;
            }
            using System.Buffers.IMemoryOwner<byte> owner = AlignedMemoryPool.Shared.Rent(2 * 4096);
            // A thread made and started first (starting one may itself need a descriptor), which runs its first batch
            // when told to.
            (Thread Thread, ManualResetEventSlim Go, Func<string> Outcome) Prepare()
            {
                var results = new BatchReadResult[2];
                string outcome = "";
                var go = new ManualResetEventSlim();
                var thread = new Thread(() =>
                {
                    go.Wait();
                    SpindleRandomAccess.ReadBatch(new[] { new BatchReadRequest(handle, owner.Memory[..4096], 0), new BatchReadRequest(handle, owner.Memory[4096..], 32768) }, results);
                    outcome = $"{results[0].BytesRead} {results[1].BytesRead}, ring {EngineCounts.RoundsOnThisThread > 0}";
                });
                thread.Start();
                return (thread, go, () => outcome);
            }
            var first = Prepare();
            var second = Prepare();
            string during;
            List<int> filler = Exhaust(0);
            try
            {
                first.Go.Set();
                first.Thread.Join();
                during = first.Outcome();
            }
            finally
            {
                foreach (int fd in filler)
                {
                    Close(fd);
                }
            }
            second.Go.Set();
            second.Thread.Join();
            Console.WriteLine("during: " + during);
            Console.WriteLine("after: " + second.Outcome());
            return 0;
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    /// <summary>Child: a write-only O_DIRECT stream changes part of a block with no descriptor free, then with one.</summary>
    public static int ChildWritesWriteOnlyDirectStream(string[] args)
    {
        string dir = Path.Combine(Path.GetTempPath(), "spindle-tests-" + Guid.NewGuid().ToString("N"));
        Directory.CreateDirectory(dir);
        try
        {
            string path = Path.Combine(dir, "direct");
            byte[] before = Enumerable.Range(0, 8192).Select(i => (byte)(i % 251)).ToArray();
            byte[] data = Enumerable.Range(0, 100).Select(i => (byte)(255 - i)).ToArray();
            File.WriteAllBytes(path, before);
            using var stream = new SpindleFileStream(path, new SpindleFileOptions
            {
                Mode = FileMode.Open, Access = FileAccess.Write, DirectIO = true, DirectIOFallback = true,
            });
            if (!SpindleFile.IsDirectIO(stream.SafeFileHandle))
            {
                Console.WriteLine($"skipped: {Path.GetTempPath()} refuses O_DIRECT");
                return 0;
            }
            string[] during = new string[3];
            List<int> filler = Exhaust(0);
            try
            {
                during[0] = "System.IO open: " + Outcome.Of(() => File.OpenHandle(Path.Combine(dir, "other"), FileMode.Create, FileAccess.Write).Dispose());
                // Changing part of block 0 needs the rest of it, read through a second, read-only descriptor.
                during[1] = "Spindle write: " + Outcome.Of(() => { stream.Write(data); stream.Flush(); });
                during[2] = "position: " + stream.Position;
            }
            finally
            {
                foreach (int fd in filler)
                {
                    Close(fd);
                }
            }
            Console.WriteLine(string.Join("\n", during));
            stream.Position = 0;
            Console.WriteLine("write after: " + Outcome.Of(() => { stream.Write(data); stream.Flush(); }));
            stream.Dispose();
            byte[] expected = [.. data, .. before.AsSpan(100)];
            byte[] file = File.ReadAllBytes(path);
            Console.WriteLine($"file: {file.Length} bytes, {(file.AsSpan().SequenceEqual(expected) ? "as expected" : "differs")}");
            return 0;
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    /// <summary>Child: fills the descriptor table but <c>args[0]</c> slots, then makes its first Spindle calls.</summary>
    public static int ChildExhaustsDescriptors(string[] args)
    {
        bool spindleFirst = args[0] == "after-open";
        int free = int.Parse(args[1]);
        bool ringExpected = bool.Parse(args[2]);
        string dir = Path.Combine(Path.GetTempPath(), "spindle-tests-" + Guid.NewGuid().ToString("N"));
        Directory.CreateDirectory(dir);
        try
        {
            // What this test's own code needs beyond the core library, loaded as an application would have
            // (Spindle's own other dependencies are left to Spindle).
            foreach (string name in new[] { "System.Linq", "System.Memory", "System.Collections", "System.Runtime.InteropServices", "System.Threading", "System.Console" })
            {
                System.Reflection.Assembly.Load(name);
            }
            string path = Path.Combine(dir, "data");
            // Either a Spindle open ran first (as before any I/O), or Spindle.dll is loaded but none of its code ran.
            // (No Spindle type may appear in this method: compiling it could run Spindle's module initializer.)
            using SafeFileHandle handle = spindleFirst ? OpenWithSpindle(path) : OpenWithSystemIO(path);
            if (spindleFirst)
            {
                // The meter's totals are counted by a listener, which needs its assembly before the descriptors go.
                StartTotals();
            }
            Console.WriteLine($"assembly loaded: {System.Reflection.Assembly.Load("Spindle").GetName().Name}");
            List<int> filler = Exhaust(free);
            Console.WriteLine($"exhausted: {filler.Count} descriptors taken, {free} free");
            try
            {
                RunSpindle(handle, dir, "during").GetAwaiter().GetResult();
            }
            finally
            {
                foreach (int fd in filler)
                {
                    Close(fd);
                }
            }
            if (spindleFirst)
            {
                Console.WriteLine($"fallbacks during: {Fallbacks()}");
            }
            RunSpindle(handle, dir, "after").GetAwaiter().GetResult();
            Console.WriteLine(CheckFile(handle));
            Console.WriteLine(RingAfter(ringExpected));
            Console.WriteLine(MeterAfter());
            return 0;
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static SafeFileHandle OpenWithSpindle(string path)
        => SpindleFile.OpenHandle(path, FileMode.Create, FileAccess.ReadWrite, FileShare.ReadWrite, FileOptions.Asynchronous);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static long Fallbacks() => SpindleTotals.Snapshot().Fallbacks;

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void StartTotals() => SpindleTotals.Start();

    private static SafeFileHandle OpenWithSystemIO(string path)
        => File.OpenHandle(path, FileMode.Create, FileAccess.ReadWrite, FileShare.ReadWrite, FileOptions.Asynchronous);

    // Kept out of line: JIT-compiling the caller must not resolve anything Spindle needs before the descriptors are gone.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static async Task RunSpindle(SafeFileHandle handle, string dir, string when)
    {
        byte[] data = Enumerable.Range(0, 8192).Select(i => (byte)(i * 7)).ToArray();
        byte[] read = new byte[8192];
        var lines = new List<string>
        {
            $"{when} sync write: " + Outcome.Of(() => SpindleRandomAccess.Write(handle, data.AsSpan(0, 4096), 0)) + " System.IO =ok",
            $"{when} async write: " + await OutcomeOf(async () => { await SpindleRandomAccess.WriteAsync(handle, data.AsMemory(4096), 4096); return "ok"; }) + " System.IO =ok",
            $"{when} async read: " + await OutcomeOf(async () => await SpindleRandomAccess.ReadAsync(handle, read, 0) + (read.AsSpan().SequenceEqual(data) ? " same" : " differs")) + " System.IO =8192 same",
            $"{when} sync read: " + Outcome.Of(() => SpindleRandomAccess.Read(handle, read, 0)) + " System.IO " + Outcome.Of(() => System.IO.RandomAccess.Read(handle, read, 0)),
            $"{when} open: " + Outcome.Of(() => { SpindleFile.OpenHandle(Path.Combine(dir, "spindle"), FileMode.Create, FileAccess.ReadWrite).Dispose(); return "ok"; })
                + " System.IO " + Outcome.Of(() => { File.OpenHandle(Path.Combine(dir, "system"), FileMode.Create, FileAccess.ReadWrite).Dispose(); return "ok"; }),
            $"{when} write-only O_DIRECT stream: " + Outcome.Of(() => { OpenDirectWriteOnly(Path.Combine(dir, "direct")).Dispose(); return "ok"; })
                + " System.IO " + Outcome.Of(() => { new FileStream(Path.Combine(dir, "system"), FileMode.Create, FileAccess.Write, FileShare.None, 4096, (FileOptions)0x20000000).Dispose(); return "ok"; }),
        };
        foreach (string line in lines)
        {
            Console.WriteLine(line);
        }
    }

    private static SpindleFileStream OpenDirectWriteOnly(string path)
        => new(path, new SpindleFileOptions { Mode = FileMode.Create, Access = FileAccess.Write, DirectIO = true, DirectIOFallback = true });

    private static async Task<Outcome> OutcomeOf(Func<Task<string>> action)
    {
        try
        {
            return new Outcome(await action(), null, 0);
        }
        catch (Exception e)
        {
            return Outcome.Of(() => throw e);
        }
    }

    private static string CheckFile(SafeFileHandle handle)
    {
        byte[] data = Enumerable.Range(0, 8192).Select(i => (byte)(i * 7)).ToArray();
        byte[] read = new byte[8192];
        int n = System.IO.RandomAccess.Read(handle, read, 0);
        return n == 8192 && read.AsSpan().SequenceEqual(data) ? "file after: ok" : $"file after: {n} bytes, differs";
    }

    // The Spindle meter works once descriptors are back: its assembly was not given up for good.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static string MeterAfter()
    {
        long operations = 0;
        using var listener = new System.Diagnostics.Metrics.MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == "Spindle" && instrument.Name == "spindle.io.operations")
            {
                l.EnableMeasurementEvents(instrument);
            }
        };
        listener.SetMeasurementEventCallback<long>((_, value, _, _) => Interlocked.Add(ref operations, value));
        listener.Start();
        using SafeFileHandle handle = File.OpenHandle(Path.Combine(Path.GetTempPath(), "spindle-tests-meter-" + Guid.NewGuid().ToString("N")),
            FileMode.CreateNew, FileAccess.ReadWrite, FileShare.None, FileOptions.DeleteOnClose);
        SpindleRandomAccess.Write(handle, new byte[10], 0);
        return Interlocked.Read(ref operations) > 0 ? "meter after: ok" : "meter after: no measurement";
    }

    // io_uring, if this kernel allows it, works once descriptors are back: the engine was not given up for good.
    private static string RingAfter(bool expected)
    {
        if (!expected)
        {
            return "io_uring after: ok (not available on this kernel)";
        }
        using SafeFileHandle handle = File.OpenHandle(Path.Combine(Path.GetTempPath(), "spindle-tests-ring-" + Guid.NewGuid().ToString("N")),
            FileMode.CreateNew, FileAccess.ReadWrite, FileShare.None, FileOptions.DeleteOnClose);
        Outcome outcome = Outcome.Of(() => SpindleRandomAccess.WriteAsync(handle, new byte[10], 0, IoEngine.IoUring).AsTask().GetAwaiter().GetResult());
        // A start that failed for want of descriptors is tried again a little later.
        bool available = false;
        for (int i = 0; i < 200 && !(available = SpindleRandomAccess.IsIoUringAvailable); i++)
        {
            Thread.Sleep(50);
        }
        IoEngine engine = SpindleRandomAccess.DefaultEngine;
        return available && engine == IoEngine.IoUring && !outcome.Threw
            ? "io_uring after: ok"
            : $"io_uring after: available={available} default={engine} write={outcome}";
    }

    // Lowers the soft limit to what is open now plus a few, then takes all but `free` of them.
    private static List<int> Exhaust(int free)
    {
        LowerLimit(Directory.GetFiles("/proc/self/fd").Length + 32);
        var taken = new List<int>(64);
        int fd;
        while ((fd = Dup(0)) >= 0)
        {
            taken.Add(fd);
        }
        for (int i = 0; i < free; i++)
        {
            Close(taken[^1]);
            taken.RemoveAt(taken.Count - 1);
        }
        return taken;
    }

    // Sets the soft limit on descriptors, as `ulimit -n` does.
    private static unsafe void LowerLimit(long soft)
    {
        long* limit = stackalloc long[2];
        if (GetRLimit(RLIMIT_NOFILE, limit) != 0)
        {
            throw new InvalidOperationException($"getrlimit: errno {Marshal.GetLastPInvokeError()}");
        }
        limit[0] = soft;
        if (SetRLimit(RLIMIT_NOFILE, limit) != 0)
        {
            throw new InvalidOperationException($"setrlimit: errno {Marshal.GetLastPInvokeError()}");
        }
    }

    private const int RLIMIT_NOFILE = 7;

    [DllImport("libc", EntryPoint = "getrlimit", SetLastError = true)]
    private static extern unsafe int GetRLimit(int resource, long* limit);

    [DllImport("libc", EntryPoint = "setrlimit", SetLastError = true)]
    private static extern unsafe int SetRLimit(int resource, long* limit);

    [DllImport("libc", EntryPoint = "dup", SetLastError = true)]
    private static extern int Dup(int fd);

    [DllImport("libc", EntryPoint = "close", SetLastError = true)]
    private static extern int Close(int fd);
}
