using System.Diagnostics.Metrics;
using System.Diagnostics.Tracing;
using System.Reflection;
using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Metrics;

/// <summary>
/// The Spindle meter follows OpenTelemetry's conventions (engine under <c>spindle.engine</c>, direction under
/// <c>disk.io.direction</c>, durations in seconds), carries the package's version, and an io_uring refusal is an event.
/// </summary>
public class MetricsConventionTests
{
    private sealed record Measurement(string Instrument, double Value, string? Engine, string? Direction, int Thread);

    private static MeterListener Listen(List<Measurement> into, Action<Instrument>? published = null)
    {
        var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == SpindleMetrics.MeterName)
            {
                published?.Invoke(instrument);
                l.EnableMeasurementEvents(instrument);
            }
        };
        void Record(Instrument instrument, double value, ReadOnlySpan<KeyValuePair<string, object?>> tags)
        {
            string? engine = null, direction = null;
            foreach (KeyValuePair<string, object?> tag in tags)
            {
                engine = tag.Key == "spindle.engine" ? (string?)tag.Value : engine;
                direction = tag.Key == "disk.io.direction" ? (string?)tag.Value : direction;
            }
            lock (into)
            {
                into.Add(new Measurement(instrument.Name, value, engine, direction, Environment.CurrentManagedThreadId));
            }
        }
        listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) => Record(instrument, value, tags));
        listener.SetMeasurementEventCallback<double>((instrument, value, tags, _) => Record(instrument, value, tags));
        listener.Start();
        return listener;
    }

    [Fact]
    public void Sync_reads_and_writes_carry_engine_and_direction_and_a_duration_in_seconds()
    {
        var measurements = new List<Measurement>();
        using MeterListener listener = Listen(measurements);
        int thread = Environment.CurrentManagedThreadId;

        using var directory = new TempDirectory();
        using (SafeFileHandle handle = SpindleFile.OpenHandle(directory.File("m"), FileMode.CreateNew, FileAccess.ReadWrite))
        {
            SpindleRandomAccess.Write(handle, new byte[3000], 0);
            Assert.Equal(1000, SpindleRandomAccess.Read(handle, new byte[1000], 2000));
        }

        Measurement[] mine;
        lock (measurements)
        {
            // Only this thread's: tests running in parallel cannot disturb the figures.
            mine = measurements.Where(m => m.Thread == thread).ToArray();
        }
        Assert.Equal([("write", 3000.0), ("read", 1000.0)],
            mine.Where(m => m.Instrument == "spindle.io.bytes").Select(m => (m.Direction!, m.Value)));
        Assert.All(mine.Where(m => m.Instrument is "spindle.io.bytes" or "spindle.io.operations"), m => Assert.Equal("sync", m.Engine));
        Measurement[] durations = mine.Where(m => m.Instrument == SpindleMetrics.DurationName).ToArray();
        Assert.Equal(["write", "read"], durations.Select(m => m.Direction));
        Assert.All(durations, m =>
        {
            Assert.Equal("sync", m.Engine);
            Assert.InRange(m.Value, 0, 60); // seconds, not ticks or milliseconds of a tiny call
        });
    }

    [Fact]
    public async Task Async_operations_record_their_duration_with_the_engine_that_ran_them()
    {
        var measurements = new List<Measurement>();
        using MeterListener listener = Listen(measurements);
        using var directory = new TempDirectory();
        using SafeFileHandle handle = SpindleFile.OpenHandle(directory.File("a"), FileMode.CreateNew, FileAccess.ReadWrite, options: FileOptions.Asynchronous);
        byte[] marker = new byte[4097];
        new Random(3).NextBytes(marker);
        await SpindleRandomAccess.WriteAsync(handle, marker, 0, IoEngine.ThreadPool);
        Assert.Equal(4097, await SpindleRandomAccess.ReadAsync(handle, new byte[4097], 0, IoEngine.ThreadPool));

        // Measurements of other tests may interleave; at least this test's two thread-pool operations are there.
        lock (measurements)
        {
            Measurement[] durations = measurements.Where(m => m.Instrument == SpindleMetrics.DurationName && m.Engine == "threadpool").ToArray();
            Assert.Contains(durations, m => m.Direction == "write");
            Assert.Contains(durations, m => m.Direction == "read");
        }
    }

    [Fact]
    public void The_meter_version_is_the_package_version_and_the_histogram_is_in_seconds()
    {
        var instruments = new List<Instrument>();
        using MeterListener listener = Listen([], instrument =>
        {
            lock (instruments)
            {
                instruments.Add(instrument);
            }
        });
        string informational = typeof(SpindleFile).Assembly.GetCustomAttribute<AssemblyInformationalVersionAttribute>()!.InformationalVersion;
        lock (instruments)
        {
            Instrument duration = Assert.Single(instruments, i => i.Name == SpindleMetrics.DurationName);
            Assert.Equal("s", duration.Unit);
            Assert.Equal(informational.Split('+')[0], duration.Meter.Version);
            Assert.NotEqual("1.0", duration.Meter.Version);
        }
    }

    [Fact]
    public void A_refused_io_uring_is_an_event_with_the_reason_and_the_errno()
    {
        (int code, string output) = ChildProcess.Run(typeof(MetricsConventionTests), nameof(RefusedChild));
        Assert.True(code == 0, output);
        Assert.Contains("event IoUringRefused level Warning errno 1 reason io_uring_setup failed", output);
        Assert.Contains("available False", output);
    }

    public static int RefusedChild(string[] args)
    {
        using var listener = new RefusalListener();
        SyscallFaults.RefuseRingSetup();
        Console.WriteLine($"available {SpindleRandomAccess.IsIoUringAvailable}");
        return 0;
    }

    private sealed class RefusalListener : EventListener
    {
        protected override void OnEventSourceCreated(EventSource source)
        {
            if (source.Name == SpindleEventSource.SourceName)
            {
                EnableEvents(source, EventLevel.Informational);
            }
        }

        protected override void OnEventWritten(EventWrittenEventArgs e)
        {
            if (e.EventSource.Name == SpindleEventSource.SourceName)
            {
                Console.WriteLine($"event {e.EventName} level {e.Level} errno {e.Payload![1]} reason {e.Payload[0]}");
            }
        }
    }
}
