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

    // Plain totals, readable without a MeterListener.
    private static long s_operationCount;
    private static long s_byteCount;
    private static long s_submissionCount;
    private static long s_fastPathHitCount;
    private static long s_fallbackCount;
    private static long s_inlineWriteCount;

    // Tag values are cached objects so that recording never boxes or allocates.
    private static readonly object[] s_engineNames = ["auto", "sync", "threadpool", "iouring"];

    internal static void Operation(IoEngine engine, long bytes)
    {
        Interlocked.Increment(ref s_operationCount);
        if (bytes > 0)
        {
            Interlocked.Add(ref s_byteCount, bytes);
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
        Interlocked.Increment(ref s_submissionCount);
        s_submissions.Add(1);
    }

    internal static void FastPathHit()
    {
        Interlocked.Increment(ref s_fastPathHitCount);
        s_fastPathHits.Add(1);
    }

    internal static void InlineWrite()
    {
        Interlocked.Increment(ref s_inlineWriteCount);
        s_inlineWrites.Add(1);
    }

    internal static void Fallback()
    {
        Interlocked.Increment(ref s_fallbackCount);
        s_fallbacks.Add(1);
    }

    /// <summary>The totals since the process started.</summary>
    internal static MetricsSnapshot Snapshot() => new(
        Interlocked.Read(ref s_operationCount),
        Interlocked.Read(ref s_byteCount),
        Interlocked.Read(ref s_submissionCount),
        Interlocked.Read(ref s_fastPathHitCount),
        Interlocked.Read(ref s_fallbackCount),
        Interlocked.Read(ref s_inlineWriteCount));
}

/// <summary>Totals of <see cref="SpindleMetrics"/> at one moment.</summary>
internal readonly record struct MetricsSnapshot(long Operations, long Bytes, long Submissions, long FastPathHits, long Fallbacks, long InlineWrites = 0);
