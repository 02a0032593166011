using System.Reflection;
using System.Diagnostics.Metrics;
using System.Runtime.InteropServices;
using Spindle;

if (args.Length > 0 && args[0] == "exit-with-pending")
{
    return ExitWithPending.Run();
}
if (args.Length > 2 && args[0] == "sync-over-async")
{
    return SyncOverAsync.Run(args[1], int.Parse(args[2]));
}

// Prints the engine in effect and which engines the Spindle meter saw operations on, after a few
// asynchronous reads and writes on the process-wide engine.
var operations = new Dictionary<string, long>();
long fastPathHits = 0;
long fallbacks = 0;
bool forceIoUring = args.Length > 0 && args[0] == "force-iouring";
using var listener = new MeterListener();
listener.InstrumentPublished = (instrument, l) =>
{
    if (instrument.Meter.Name == "Spindle")
    {
        l.EnableMeasurementEvents(instrument);
    }
};
listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) =>
{
    lock (operations)
    {
        if (instrument.Name == "spindle.io.operations")
        {
            foreach (KeyValuePair<string, object?> tag in tags)
            {
                if (tag.Key == "spindle.engine")
                {
                    string engine = (string)tag.Value!;
                    operations[engine] = operations.GetValueOrDefault(engine) + value;
                }
            }
        }
        else if (instrument.Name == "spindle.fastpath.hits")
        {
            fastPathHits += value;
        }
        else if (instrument.Name == "spindle.engine.fallbacks")
        {
            fallbacks += value;
        }
    }
});
listener.Start();

string path = Path.Combine(Path.GetTempPath(), "spindle-probe-" + Guid.NewGuid().ToString("N"));
try
{
    using (var handle = File.OpenHandle(path, FileMode.Create, FileAccess.ReadWrite))
    {
        byte[] data = new byte[8192];
        Random.Shared.NextBytes(data);
        await SpindleRandomAccess.WriteAsync(handle, data, 0);
        byte[] read = new byte[8192];
        for (int i = 0; i < 4; i++)
        {
            int n = forceIoUring
                ? await SpindleRandomAccess.ReadAsync(handle, read, 0, IoEngine.IoUring)
                : await SpindleRandomAccess.ReadAsync(handle, read, 0);
            if (n != data.Length || !read.AsSpan().SequenceEqual(data))
            {
                Console.WriteLine("error=mismatch");
                return 1;
            }
        }
    }
}
finally
{
    File.Delete(path);
}

lock (operations)
{
    Console.WriteLine($"engine={SpindleRandomAccess.DefaultEngine}");
    Console.WriteLine($"iouring={SpindleRandomAccess.IsIoUringAvailable}");
    Console.WriteLine($"operations={string.Join(",", operations.OrderBy(p => p.Key).Select(p => $"{p.Key}:{p.Value}"))}");
    Console.WriteLine($"fastpath={fastPathHits}");
    Console.WriteLine($"fallbacks={fallbacks}");
}
return 0;

// Leaves reads in flight on the ring (on a FIFO nobody writes to), closes their handle, and exits:
// the process must neither hang nor crash.
static partial class ExitWithPending
{
    [LibraryImport("libc", EntryPoint = "mkfifo", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static partial int MkFifo(string path, int mode);

    internal static int Run()
    {
        string dir = Path.Combine(Path.GetTempPath(), "spindle-probe-" + Guid.NewGuid().ToString("N"));
        Directory.CreateDirectory(dir);
        string fifo = Path.Combine(dir, "fifo");
        if (MkFifo(fifo, 0x180) != 0)
        {
            Console.WriteLine("error=mkfifo");
            return 1;
        }
        var reader = File.OpenHandle(fifo, FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite);
        var pending = new List<Task<int>>();
        for (int i = 0; i < 100; i++)
        {
            pending.Add(SpindleRandomAccess.ReadAsync(reader, new byte[16], 0, IoEngine.IoUring).AsTask());
        }
        reader.Dispose();
        Directory.Delete(dir, recursive: true);
        Console.WriteLine($"pending={pending.Count(t => !t.IsCompleted)}");
        Console.WriteLine($"engine={SpindleRandomAccess.DefaultEngine}");
        return 0;
    }
}

// N pool threads each start a read and block on its result (sync-over-async), with the pool capped
// at maxThreads: the reads must complete without the pool having a free thread for them, as System.IO's do.
static class SyncOverAsync
{
    internal static int Run(string engineName, int maxThreads)
    {
        const int Callers = 200;
        // Every read must really be asynchronous: no page-cache answer on the caller's thread.
        AppContext.SetSwitch("Spindle.DisableReadFastPath", true);
        System.Threading.ThreadPool.SetMinThreads(2, 2);
        if (!System.Threading.ThreadPool.SetMaxThreads(maxThreads, maxThreads))
        {
            Console.WriteLine("error=setmaxthreads");
            return 1;
        }
        string path = Path.Combine(Path.GetTempPath(), "spindle-probe-" + Guid.NewGuid().ToString("N"));
        try
        {
            byte[] data = new byte[Callers * 16];
            Random.Shared.NextBytes(data);
            File.WriteAllBytes(path, data);
            using var handle = File.OpenHandle(path, FileMode.Open, FileAccess.Read);
            bool system = engineName == "system";
            IoEngine engine = system ? IoEngine.Auto : Enum.Parse<IoEngine>(engineName);
            var callers = new Task<bool>[Callers];
            for (int i = 0; i < Callers; i++)
            {
                int index = i;
                callers[i] = Task.Run(() =>
                {
                    byte[] buffer = new byte[16];
                    int read = system
                        ? System.IO.RandomAccess.ReadAsync(handle, buffer, index * 16).AsTask().Result
                        : SpindleRandomAccess.ReadAsync(handle, buffer, index * 16, engine).AsTask().Result;
                    return read == 16 && buffer.AsSpan().SequenceEqual(data.AsSpan(index * 16, 16));
                });
            }
            // The timeout only detects the starvation: a deadlocked pool never finishes.
            bool finished = Task.WaitAll(callers, TimeSpan.FromSeconds(40));
            if (!finished)
            {
                EngineState.Dump(callers.Count(t => !t.IsCompleted));
            }
            Console.WriteLine($"finished={finished}");
            Console.WriteLine($"correct={(finished ? callers.Count(t => t.Result) : 0)}");
            Console.WriteLine($"threads={System.Threading.ThreadPool.ThreadCount}");
        }
        finally
        {
            File.Delete(path);
        }
        Console.Out.Flush();
        // Threads a starved pool left blocked must not keep the process alive.
        Environment.Exit(0);
        return 0;
    }
}

// What a hung run leaves behind, for the test's failure message: the io_uring engine's counters and flags (read by
// reflection: the probe sees only the public API) and where each thread of the process waits.
static class EngineState
{
    internal static void Dump(int waiting)
    {
        Console.WriteLine($"state.callers_waiting={waiting} pool_threads={System.Threading.ThreadPool.ThreadCount} pool_pending={System.Threading.ThreadPool.PendingWorkItemCount}");
        try
        {
            Type selector = typeof(SpindleRandomAccess).Assembly.GetType("Spindle.Engines.EngineSelector")!;
            object engine = selector.GetMethod("Get", BindingFlags.Static | BindingFlags.NonPublic | BindingFlags.Public)!.Invoke(null, [IoEngine.IoUring])!;
            object ring = engine.GetType().GetProperty("Thread", BindingFlags.Instance | BindingFlags.NonPublic | BindingFlags.Public)!.GetValue(engine)!;
            Fields("ring", ring, 2, new HashSet<object>(ReferenceEqualityComparer.Instance));
        }
        catch (Exception e)
        {
            Console.WriteLine($"state.error={e.GetType().Name}: {e.Message}");
        }
        foreach (string task in Directory.GetDirectories("/proc/self/task"))
        {
            string Read(string name) { try { return File.ReadAllText(Path.Combine(task, name)).Trim(); } catch (IOException) { return "?"; } }
            string stat = Read("stat");
            string state = stat[(stat.LastIndexOf(')') + 2)..].Split(' ')[0];
            Console.WriteLine($"state.thread {Path.GetFileName(task)} {Read("comm")} {state} wchan={Read("wchan")} syscall={Read("syscall").Split(' ')[0]}");
        }
    }

    private static void Fields(string prefix, object target, int depth, HashSet<object> seen)
    {
        if (!seen.Add(target))
        {
            return;
        }
        for (Type? type = target.GetType(); type is not null && type != typeof(object); type = type.BaseType)
        {
            foreach (FieldInfo field in type.GetFields(BindingFlags.Instance | BindingFlags.NonPublic | BindingFlags.Public | BindingFlags.DeclaredOnly))
            {
                object? value = field.GetValue(target);
                string name = $"{prefix}.{field.Name}";
                if (value is null || field.FieldType.IsPrimitive || field.FieldType.IsEnum)
                {
                    Console.WriteLine($"state.{name}={value}");
                }
                else if (value.GetType().GetProperty("Count") is { } count && value is System.Collections.IEnumerable)
                {
                    Console.WriteLine($"state.{name}.Count={count.GetValue(value)}");
                }
                else if (depth > 0 && value.GetType().Namespace?.StartsWith("Spindle", StringComparison.Ordinal) == true && !value.GetType().IsValueType)
                {
                    Fields(name, value, depth - 1, seen);
                }
            }
        }
    }
}
