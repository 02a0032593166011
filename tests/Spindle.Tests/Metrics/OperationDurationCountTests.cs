using System.Buffers;
using System.Diagnostics.Metrics;
using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Metrics;

/// <summary>
/// Every read records one <c>spindle.io.operation.duration</c> measurement and one operation, whatever engine and
/// mechanism ran it: a read the router runs inline (memory-backed storage), one the page cache serves on the caller's
/// thread, and one that goes to a disk (the ring or a pool thread). A duration counted twice skews every percentile.
/// </summary>
[Collection(Spindle.Tests.Beyond.MeterCollection.Name)]
public class OperationDurationCountTests
{
    private const int Reads = 40; // asynchronous ones, and as many synchronous

    public static TheoryData<IoEngine, string> Cases()
    {
        var cases = new TheoryData<IoEngine, string>();
        foreach (IoEngine engine in new[] { IoEngine.Auto, IoEngine.Sync, IoEngine.ThreadPool, IoEngine.IoUring })
        {
            foreach (string place in new[] { "tmpfs", "page cache", "disk" })
            {
                cases.Add(engine, place);
            }
        }
        return cases;
    }

    [Theory]
    [MemberData(nameof(Cases))]
    public async Task Each_read_records_one_duration(IoEngine engine, string place)
    {
        TmpfsMount? tmpfs = null;
        if (place == "tmpfs" && (tmpfs = TmpfsMount.TryMount("1m", out string reason)) is null)
        {
            Console.WriteLine("skipped: " + reason);
            return;
        }
        using var directory = new TempDirectory(AppContext.BaseDirectory); // a disk
        try
        {
            string path = tmpfs?.File("data") ?? directory.File("data");
            byte[] data = new byte[64 * 1024];
            new Random(3).NextBytes(data);
            File.WriteAllBytes(path, data); // by System.IO: nothing counted
            bool direct = place == "disk";
            using SafeFileHandle handle = SpindleFile.OpenHandle(path, new SpindleFileOptions { Mode = FileMode.Open, Access = FileAccess.Read, DirectIO = direct });
            using IMemoryOwner<byte> owner = AlignedMemoryPool.Shared.Rent(4096);
            Memory<byte> buffer = owner.Memory[..4096];

            long operations = 0, durations = 0;
            using var listener = new MeterListener();
            listener.InstrumentPublished = (instrument, l) =>
            {
                if (instrument.Meter.Name == SpindleMetrics.MeterName && instrument.Name is "spindle.io.operations" or SpindleMetrics.DurationName)
                {
                    l.EnableMeasurementEvents(instrument);
                }
            };
            void Record(Instrument instrument, double value, ReadOnlySpan<KeyValuePair<string, object?>> tags)
            {
                foreach (KeyValuePair<string, object?> tag in tags)
                {
                    if (tag.Key == "disk.io.direction" && (string?)tag.Value == "read")
                    {
                        if (instrument.Name == SpindleMetrics.DurationName)
                        {
                            Interlocked.Increment(ref durations);
                        }
                        else
                        {
                            Interlocked.Add(ref operations, (long)value);
                        }
                    }
                }
            }
            listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) => Record(instrument, value, tags));
            listener.SetMeasurementEventCallback<double>((instrument, value, tags, _) => Record(instrument, value, tags));
            listener.Start();

            for (int i = 0; i < Reads; i++)
            {
                Assert.Equal(4096, await SpindleRandomAccess.ReadAsync(handle, buffer, i % 16 * 4096L, engine));
                Assert.Equal(4096, SpindleRandomAccess.Read(handle, buffer.Span, i % 16 * 4096L));
            }
            listener.Dispose();

            Assert.Equal(data.AsSpan((Reads - 1) % 16 * 4096, 4096).ToArray(), buffer.ToArray()); // the last read's bytes
            Assert.Equal(2 * Reads, Interlocked.Read(ref operations));
            Assert.Equal(2 * Reads, Interlocked.Read(ref durations));
        }
        finally
        {
            tmpfs?.Dispose();
        }
    }
}
