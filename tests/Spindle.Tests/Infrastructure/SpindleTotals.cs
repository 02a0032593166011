using System.Diagnostics.Metrics;
using System.Runtime.CompilerServices;
using Spindle.Diagnostics;

namespace Spindle.Tests.Infrastructure;

/// <summary>Totals of the <c>Spindle</c> meter at one moment.</summary>
public readonly record struct MetricsSnapshot(long Operations, long Bytes, long Submissions, long FastPathHits, long Fallbacks, long InlineWrites = 0);

/// <summary>
/// Process-wide totals of what Spindle did, for tests that prove which path ran: a <see cref="MeterListener"/> on the
/// <c>Spindle</c> meter's counters, started by the first <see cref="Snapshot"/> (or <see cref="Start"/>), adds up every
/// measurement. Tests compare two snapshots, so what ran before the listener started is never needed.
/// </summary>
public static class SpindleTotals
{
    private static readonly object s_gate = new();
    private static readonly StrongBox<long> s_operations = new();
    private static readonly StrongBox<long> s_bytes = new();
    private static readonly StrongBox<long> s_fastPathHits = new();
    private static readonly StrongBox<long> s_fallbacks = new();
    private static readonly StrongBox<long> s_inlineWrites = new();
    private static MeterListener? s_listener;

    /// <summary>Starts counting (once per process); call it before anything that may leave no descriptor to load the meter's assembly.</summary>
    public static void Start()
    {
        lock (s_gate)
        {
            if (s_listener is not null)
            {
                return;
            }
            var listener = new MeterListener
            {
                InstrumentPublished = (instrument, l) =>
                {
                    if (instrument.Meter.Name == SpindleMetrics.MeterName && Total(instrument.Name) is not null)
                    {
                        l.EnableMeasurementEvents(instrument);
                    }
                },
            };
            listener.SetMeasurementEventCallback<long>((instrument, value, _, _) =>
            {
                if (Total(instrument.Name) is { } total)
                {
                    Interlocked.Add(ref total.Value, value);
                }
            });
            listener.Start();
            s_listener = listener;
        }
    }

    /// <summary>The totals counted since <see cref="Start"/>; io_uring enters since the process started.</summary>
    public static MetricsSnapshot Snapshot()
    {
        Start();
        return new MetricsSnapshot(Interlocked.Read(ref s_operations.Value), Interlocked.Read(ref s_bytes.Value), SpindleMetrics.Submissions,
            Interlocked.Read(ref s_fastPathHits.Value), Interlocked.Read(ref s_fallbacks.Value), Interlocked.Read(ref s_inlineWrites.Value));
    }

    private static StrongBox<long>? Total(string instrument) => instrument switch
    {
        "spindle.io.operations" => s_operations,
        "spindle.io.bytes" => s_bytes,
        "spindle.fastpath.hits" => s_fastPathHits,
        "spindle.engine.fallbacks" => s_fallbacks,
        "spindle.fastpath.inline_writes" => s_inlineWrites,
        _ => null,
    };
}
