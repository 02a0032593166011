using System.Diagnostics.Metrics;
using Microsoft.Win32.SafeHandles;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.RandomAccess;

/// <summary>The synchronous members report each call and its bytes to the Spindle meter.</summary>
public class SyncMetricsTests
{
    [Fact]
    public void Each_sync_call_records_one_operation_and_its_bytes()
    {
        // Measurements arrive on the recording thread; only this thread's are counted, so tests running
        // in parallel cannot disturb the totals.
        int thread = Environment.CurrentManagedThreadId;
        long operations = 0, bytes = 0;
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == "Spindle" && instrument.Name is "spindle.io.operations" or "spindle.io.bytes")
            {
                l.EnableMeasurementEvents(instrument);
            }
        };
        listener.SetMeasurementEventCallback<long>((instrument, value, tags, state) =>
        {
            if (Environment.CurrentManagedThreadId != thread)
            {
                return;
            }
            if (instrument.Name == "spindle.io.operations")
            {
                operations += value;
            }
            else
            {
                bytes += value;
            }
        });
        listener.Start();

        using var directory = new TempDirectory();
        using SafeFileHandle handle = SpindleFile.OpenHandle(directory.File("m"), FileMode.CreateNew, FileAccess.ReadWrite);
        SpindleRandomAccess.Write(handle, new byte[1000], 0);
        SpindleRandomAccess.Write(handle, [new byte[300], new byte[200], ReadOnlyMemory<byte>.Empty], 1000);
        Assert.Equal(700, SpindleRandomAccess.Read(handle, new byte[700], 800));
        Assert.Equal(1500, SpindleRandomAccess.Read(handle, [new byte[1000], new byte[900]], 0));
        Assert.Equal(4, operations);
        Assert.Equal(1000 + 500 + 700 + 1500, bytes);
    }
}
