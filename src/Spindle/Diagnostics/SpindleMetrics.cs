using System.Diagnostics.Metrics;

namespace Spindle.Diagnostics;

/// <summary>
/// The <c>Spindle</c> meter: what Spindle actually did, for dashboards and for tests that prove which
/// engine ran. Counters are also kept as plain totals (<see cref="Snapshot"/>) for in-process checks.
/// </summary>
internal static class SpindleMetrics
{
    /// <summary>The name of the <see cref="System.Diagnostics.Metrics.Meter"/>.</summary>
    internal const string MeterName = "Spindle";

    private static readonly Meter s_meter = new(MeterName, "1.0");

    private static readonly Counter<long> s_operations = s_meter.CreateCounter<long>("spindle.io.operations", "{operation}", "File operations issued to the kernel (system calls or io_uring submissions entries).");
    private static readonly Counter<long> s_bytes = s_meter.CreateCounter<long>("spindle.io.bytes", "By", "Bytes read or written.");
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

    internal static void Operation(IoEngine engine, long bytes)
    {
        s_operationCount.Add(1);
        if (bytes > 0)
        {
            s_byteCount.Add(bytes);
        }
        if (s_operations.Enabled)
        {
            var tag = new KeyValuePair<string, object?>("engine", s_engineNames[(int)engine]);
            s_operations.Add(1, tag);
            if (bytes > 0)
            {
                s_bytes.Add(bytes, tag);
            }
        }
    }

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
