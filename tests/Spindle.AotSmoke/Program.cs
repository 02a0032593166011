using System.Diagnostics.Metrics;
using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;
using Spindle;

[assembly: System.Runtime.Versioning.SupportedOSPlatform("linux")]

// Spindle's main features, compiled ahead of time: each check prints one line; any mismatch exits 1.
// An exception (or a crash before Main, as a module initializer that needs the JIT would cause) fails too.
string dir = Path.Combine(Path.GetTempPath(), $"spindle-aot-{Environment.ProcessId}");
Directory.CreateDirectory(dir);
int failures = 0;
void Check(bool ok, string what)
{
    Console.WriteLine($"{(ok ? "ok  " : "FAIL")} {what}");
    failures += ok ? 0 : 1;
}

// A metrics listener: counts what the Spindle meter reports, per instrument.
var measured = new Dictionary<string, long>();
using var listener = new MeterListener();
listener.InstrumentPublished = (instrument, l) =>
{
    if (instrument.Meter.Name == "Spindle")
    {
        l.EnableMeasurementEvents(instrument);
    }
};
listener.SetMeasurementEventCallback<long>((instrument, value, tags, state) =>
{
    string key = instrument.Name;
    foreach (KeyValuePair<string, object?> tag in tags)
    {
        if (tag.Key == "spindle.engine")
        {
            key += "/" + tag.Value;
        }
    }
    lock (measured)
    {
        // An observable counter reports its running total; the others report increments.
        measured[key] = instrument.IsObservable ? value : measured.GetValueOrDefault(key) + value;
    }
});
listener.Start();
long Measured(string key)
{
    listener.RecordObservableInstruments();
    lock (measured)
    {
        return measured.GetValueOrDefault(key);
    }
}

try
{
    var random = new Random(19);
    byte[] data = new byte[1 << 20];
    random.NextBytes(data);

    // Async random access: 64 concurrent 4 KiB reads at scattered offsets, on io_uring when the kernel allows it.
    string file = Path.Combine(dir, "random.bin");
    File.WriteAllBytes(file, data);
    bool ring = SpindleRandomAccess.IsIoUringAvailable;
    IoEngine engine = ring ? IoEngine.IoUring : IoEngine.ThreadPool;
    Check(!ring || SpindleRandomAccess.DefaultEngine == IoEngine.IoUring,
        $"io_uring available: {ring}; default engine {SpindleRandomAccess.DefaultEngine}");
    using (SafeFileHandle handle = SpindleFile.OpenHandle(file, new SpindleFileOptions
    {
        Mode = FileMode.Open,
        Access = FileAccess.Read,
        Options = FileOptions.Asynchronous,
        DirectIO = true,
        DirectIOFallback = true,
        Engine = engine,
    }))
    {
        long enters = Measured("spindle.io_uring.enters");
        long operations = Measured($"spindle.io.operations/{(ring ? "iouring" : "threadpool")}");
        using var owners = new DisposableList();
        var reads = new List<(long Offset, Memory<byte> Buffer, ValueTask<int> Read)>();
        for (int i = 0; i < 64; i++)
        {
            long offset = (long)random.Next(0, data.Length / 4096) * 4096;
            Memory<byte> buffer = owners.Add(AlignedMemoryPool.Shared.Rent(4096)).Memory[..4096];
            reads.Add((offset, buffer, SpindleRandomAccess.ReadAsync(handle, buffer, offset, engine)));
        }
        int same = 0;
        foreach ((long offset, Memory<byte> buffer, ValueTask<int> read) in reads)
        {
            same += await read == 4096 && buffer.Span.SequenceEqual(data.AsSpan((int)offset, 4096)) ? 1 : 0;
        }
        Check(same == reads.Count, $"async random access on {engine}: {same} of {reads.Count} reads return the file's bytes");
        Check(!ring || Measured("spindle.io_uring.enters") > enters, "the reads went through io_uring_enter");
        Check(Measured($"spindle.io.operations/{(ring ? "iouring" : "threadpool")}") >= operations + reads.Count,
            $"the metrics listener saw {Measured($"spindle.io.operations/{(ring ? "iouring" : "threadpool")}") - operations} operations on {engine}");
    }

    // A direct (O_DIRECT) stream: write, then read back through the stream's aligned buffer.
    string direct = Path.Combine(dir, "direct.bin");
    var directOptions = new SpindleFileOptions { Mode = FileMode.Create, Access = FileAccess.ReadWrite, DirectIO = true, DirectIOFallback = true };
    using (var stream = new SpindleFileStream(direct, directOptions))
    {
        stream.Write(data, 0, 300_000);
        await stream.WriteAsync(data.AsMemory(300_000, 5));
        stream.Position = 0;
        byte[] back = new byte[300_005];
        stream.ReadExactly(back);
        Check(back.AsSpan().SequenceEqual(data.AsSpan(0, 300_005)), $"direct stream (O_DIRECT: {SpindleFile.IsDirectIO(stream.SafeFileHandle)}): 300,005 bytes written and read back");
    }
    Check(File.ReadAllBytes(direct).AsSpan().SequenceEqual(data.AsSpan(0, 300_005)), "direct stream: the file holds what was written");

    // AppendLog: records appended with O_APPEND, then scanned back.
    string log = Path.Combine(dir, "log.bin");
    using (SafeFileHandle handle = SpindleFile.OpenHandle(log, new SpindleFileOptions { Mode = FileMode.Create, Access = FileAccess.Write, AtomicAppend = true }))
    {
        for (int i = 0; i < 100; i++)
        {
            AppendLog.Append(handle, data.AsSpan(i * 10, i));
        }
    }
    AppendLogScan scan = AppendLog.ReadAll(log);
    int intact = Enumerable.Range(0, 100).Count(i => i < scan.Records.Count && scan.Records[i].Span.SequenceEqual(data.AsSpan(i * 10, i)));
    Check(scan.Records.Count == 100 && intact == 100 && scan.Damaged.Count == 0, $"AppendLog: {scan.Records.Count} records scanned, {intact} intact, {scan.Damaged.Count} damaged");

    // Copy, synchronous and asynchronous.
    string copy = Path.Combine(dir, "copy.bin");
    SpindleFile.Copy(file, copy);
    Check(File.ReadAllBytes(copy).AsSpan().SequenceEqual(data), "SpindleFile.Copy: the copy holds the source's bytes");
    await SpindleFile.CopyAsync(direct, copy, overwrite: true);
    Check(File.ReadAllBytes(copy).AsSpan().SequenceEqual(data.AsSpan(0, 300_005)), "SpindleFile.CopyAsync overwrite: the copy holds the source's bytes");

    Check(Measured("spindle.io.bytes/" + (ring ? "iouring" : "threadpool")) > 0, "the metrics listener saw bytes");
}
catch (Exception e)
{
    Console.WriteLine($"FAIL {e}");
    failures++;
}
finally
{
    Directory.Delete(dir, recursive: true);
}
Console.WriteLine(failures == 0 ? "aot smoke: all checks passed" : $"aot smoke: {failures} failed");
Console.WriteLine($"native AOT: {!RuntimeFeature.IsDynamicCodeSupported}");
return failures == 0 ? 0 : 1;

sealed class DisposableList : IDisposable
{
    private readonly List<IDisposable> _items = [];

    public T Add<T>(T item) where T : IDisposable
    {
        _items.Add(item);
        return item;
    }

    public void Dispose() => _items.ForEach(i => i.Dispose());
}
