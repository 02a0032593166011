using System.Diagnostics;
using System.Diagnostics.Metrics;
using System.Runtime.CompilerServices;

namespace Spindle.Diagnostics;

/// <summary>Which way the bytes of an operation go; the values of OpenTelemetry's <c>disk.io.direction</c> attribute.</summary>
internal enum IoDirection : byte
{
    Read,
    Write,
}

/// <summary>
/// The <c>Spindle</c> meter: what Spindle actually did, for dashboards and for tests that prove which
/// engine ran. Counters are also kept as plain totals (<see cref="Snapshot"/>) for in-process checks.
/// </summary>
/// <remarks>
/// Names and attributes follow OpenTelemetry's semantic conventions where one exists: durations in seconds as
/// a histogram named <c>*.duration</c>, bytes in <c>By</c>, the registered <c>disk.io.direction</c> attribute
/// (<c>read</c>/<c>write</c>, as on <c>process.disk.io</c>), and Spindle's own attributes under <c>spindle.</c>.
/// </remarks>
internal static class SpindleMetrics
{
    /// <summary>The name of the <see cref="System.Diagnostics.Metrics.Meter"/>.</summary>
    internal const string MeterName = "Spindle";

    /// <summary>The attribute naming the engine that did an operation: <c>sync</c>, <c>threadpool</c> or <c>iouring</c>.</summary>
    internal const string EngineTag = "spindle.engine";

    /// <summary>OpenTelemetry's attribute for the direction of disk I/O: <c>read</c> or <c>write</c>.</summary>
    internal const string DirectionTag = "disk.io.direction";

    /// <summary>The name of the operation duration histogram (seconds).</summary>
    internal const string DurationName = "spindle.io.operation.duration";

    private static readonly Meter s_meter = new(MeterName, LibraryVersion.Value);

    private static readonly Counter<long> s_operations = s_meter.CreateCounter<long>("spindle.io.operations", "{operation}", "File operations issued to the kernel (system calls or io_uring submissions entries).");
    private static readonly Counter<long> s_bytes = s_meter.CreateCounter<long>("spindle.io.bytes", "By", "Bytes read or written.");
    private static readonly Histogram<double> s_duration = s_meter.CreateHistogram<double>(DurationName, "s",
        "Duration of file operations: each synchronous read or write, and each asynchronous SpindleRandomAccess read or write from the call to its completion.",
        tags: null,
        advice: new InstrumentAdvice<double> { HistogramBucketBoundaries = [0.000_005, 0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] });
    private static readonly Counter<long> s_submissions = s_meter.CreateCounter<long>("spindle.io_uring.enters", "{call}", "io_uring_enter calls.");
    private static readonly Counter<long> s_fastPathHits = s_meter.CreateCounter<long>("spindle.fastpath.hits", "{operation}", "Async reads completed synchronously from the page cache.");
    private static readonly Counter<long> s_inlineWrites = s_meter.CreateCounter<long>("spindle.fastpath.inline_writes", "{operation}", "Small async writes to cached local files done on the caller's thread.");
    private static readonly Counter<long> s_fallbacks = s_meter.CreateCounter<long>("spindle.engine.fallbacks", "{event}", "Times an engine was unavailable and another was used.");

    // Plain totals, readable without a MeterListener; striped so that concurrent I/O on several
    // cores does not contend on one cache line.
    private static readonly StripedCounter s_operationCount = new();
    private static readonly StripedCounter s_byteCount = new();
    private static readonly StripedCounter s_submissionCount = new();
    private static readonly StripedCounter s_fastPathHitCount = new();
    private static readonly StripedCounter s_fallbackCount = new();
    private static readonly StripedCounter s_inlineWriteCount = new();

    // Tag values are cached objects so that recording never boxes or allocates.
    private static readonly object[] s_engineNames = ["auto", "sync", "threadpool", "iouring"];
    private static readonly object[] s_directionNames = ["read", "write"];

    internal static void Operation(IoEngine engine, IoDirection direction, long bytes)
    {
        s_operationCount.Add(1);
        if (bytes > 0)
        {
            s_byteCount.Add(bytes);
        }
        if (s_operations.Enabled || s_bytes.Enabled)
        {
            KeyValuePair<string, object?> engineTag = new(EngineTag, s_engineNames[(int)engine]);
            KeyValuePair<string, object?> directionTag = new(DirectionTag, s_directionNames[(int)direction]);
            s_operations.Add(1, engineTag, directionTag);
            if (bytes > 0)
            {
                s_bytes.Add(bytes, engineTag, directionTag);
            }
        }
    }

    /// <summary>A timestamp to pass to <see cref="Duration"/> when a listener records durations, else 0 (no clock read).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static long StartTiming() => s_duration.Enabled ? Stopwatch.GetTimestamp() : 0;

    /// <summary>Records the time since <paramref name="started"/> (from <see cref="StartTiming"/>); nothing when it is 0.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void Duration(long started, IoEngine engine, IoDirection direction)
    {
        if (started != 0)
        {
            RecordDuration(started, engine, direction);
        }
    }

    private static void RecordDuration(long started, IoEngine engine, IoDirection direction)
        => s_duration.Record(Stopwatch.GetElapsedTime(started).TotalSeconds,
            new KeyValuePair<string, object?>(EngineTag, s_engineNames[(int)engine]),
            new KeyValuePair<string, object?>(DirectionTag, s_directionNames[(int)direction]));

    internal static void Submission()
    {
        s_submissionCount.Add(1);
        s_submissions.Add(1);
    }

    internal static void FastPathHit()
    {
        s_fastPathHitCount.Add(1);
        s_fastPathHits.Add(1);
    }

    internal static void InlineWrite()
    {
        s_inlineWriteCount.Add(1);
        s_inlineWrites.Add(1);
    }

    internal static void Fallback()
    {
        s_fallbackCount.Add(1);
        s_fallbacks.Add(1);
    }

    /// <summary>The totals since the process started.</summary>
    internal static MetricsSnapshot Snapshot() => new(
        s_operationCount.Read(),
        s_byteCount.Read(),
        s_submissionCount.Read(),
        s_fastPathHitCount.Read(),
        s_fallbackCount.Read(),
        s_inlineWriteCount.Read());
}

/// <summary>Totals of <see cref="SpindleMetrics"/> at one moment.</summary>
internal readonly record struct MetricsSnapshot(long Operations, long Bytes, long Submissions, long FastPathHits, long Fallbacks, long InlineWrites = 0);
