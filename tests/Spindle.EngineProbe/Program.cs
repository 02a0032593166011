using System.Diagnostics.Metrics;
using Spindle;

// Prints the engine in effect and which engines the Spindle meter saw operations on, after a few
// asynchronous reads and writes on the process-wide engine.
var operations = new Dictionary<string, long>();
long fastPathHits = 0;
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
                if (tag.Key == "engine")
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
            int n = await SpindleRandomAccess.ReadAsync(handle, read, 0);
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
}
return 0;
