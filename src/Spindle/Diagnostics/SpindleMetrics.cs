using System.Diagnostics.Metrics;
using System.Runtime.CompilerServices;
using Spindle.Interop;

namespace Spindle.Diagnostics;

/// <summary>
/// The <c>Spindle</c> meter: what Spindle actually did, for dashboards and for tests that prove which
/// engine ran. Counters are also kept as plain totals (<see cref="Snapshot"/>) for in-process checks.
/// </summary>
internal static class SpindleMetrics
{
    /// <summary>The name of the <see cref="System.Diagnostics.Metrics.Meter"/>.</summary>
    internal const string MeterName = "Spindle";

    // Plain totals, readable without a MeterListener; striped so that concurrent I/O on several
    // cores does not contend on one cache line. They need nothing beyond the core library, so they
    // count even in a process that could not load the meter's assembly.
    private static readonly StripedCounter s_operationCount = new();
    private static readonly StripedCounter s_byteCount = new();
    private static readonly StripedCounter s_submissionCount = new();
    private static readonly StripedCounter s_fastPathHitCount = new();
    private static readonly StripedCounter s_fallbackCount = new();
    private static readonly StripedCounter s_inlineWriteCount = new();

    // The meter's instruments, created when Spindle's assemblies are loaded (see DependencyLoader); null
    // before, or when the meter's assembly could not be loaded (then only the totals count).
    private static SpindleInstruments? s_instruments;
    private static readonly object s_createGate = new();

    // Recording happens after I/O that succeeded, so nothing in it may fail: until DependencyLoader has
    // settled (a process out of descriptors at its first Spindle call), nothing is recorded, because even
    // the totals' code needs an assembly beyond the core library (System.Threading.Thread).
    private static bool Recording => DependencyLoader.Settled || DependencyLoader.TrySettle();

    internal static void Operation(IoEngine engine, long bytes)
    {
        if (!Recording)
        {
            return;
        }
        Count(engine, bytes);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void Count(IoEngine engine, long bytes)
    {
        s_operationCount.Add(1);
        if (bytes > 0)
        {
            s_byteCount.Add(bytes);
        }
        s_instruments?.Operation(engine, bytes);
    }

    internal static void Submission()
    {
        if (Recording)
        {
            Count(s_submissionCount);
            s_instruments?.Submission();
        }
    }

    internal static void FastPathHit()
    {
        if (Recording)
        {
            Count(s_fastPathHitCount);
            s_instruments?.FastPathHit();
        }
    }

    internal static void InlineWrite()
    {
        if (Recording)
        {
            Count(s_inlineWriteCount);
            s_instruments?.InlineWrite();
        }
    }

    internal static void Fallback()
    {
        if (Recording)
        {
            Count(s_fallbackCount);
            s_instruments?.Fallback();
        }
    }

    /// <summary>The totals since the process started.</summary>
    internal static MetricsSnapshot Snapshot() => new(
        s_operationCount.Read(),
        s_byteCount.Read(),
        s_submissionCount.Read(),
        s_fastPathHitCount.Read(),
        s_fallbackCount.Read(),
        s_inlineWriteCount.Read());

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void Count(StripedCounter counter) => counter.Add(1);

    /// <summary>Creates the meter (once Spindle's assemblies are loaded, while descriptors are free: the meter loads more of its own).</summary>
    internal static void CreateInstruments()
    {
        try
        {
            lock (s_createGate)
            {
                s_instruments ??= new SpindleInstruments();
            }
        }
        catch (Exception)
        {
            // The meter's assembly could not be loaded: only the totals count.
        }
    }
}

/// <summary>The <c>Spindle</c> meter and its instruments. Recording never throws: a listener's exception is not the caller's.</summary>
internal sealed class SpindleInstruments
{
    private readonly Meter _meter = new(SpindleMetrics.MeterName, "1.0");
    private readonly Counter<long> _operations;
    private readonly Counter<long> _bytes;
    private readonly Counter<long> _submissions;
    private readonly Counter<long> _fastPathHits;
    private readonly Counter<long> _inlineWrites;
    private readonly Counter<long> _fallbacks;

    // Tag values are cached objects so that recording never boxes or allocates.
    private static readonly object[] s_engineNames = ["auto", "sync", "threadpool", "iouring"];

    internal SpindleInstruments()
    {
        _operations = _meter.CreateCounter<long>("spindle.io.operations", "{operation}", "File operations issued to the kernel (system calls or io_uring submissions entries).");
        _bytes = _meter.CreateCounter<long>("spindle.io.bytes", "By", "Bytes read or written.");
        _submissions = _meter.CreateCounter<long>("spindle.io_uring.enters", "{call}", "io_uring_enter calls.");
        _fastPathHits = _meter.CreateCounter<long>("spindle.fastpath.hits", "{operation}", "Async reads completed synchronously from the page cache.");
        _inlineWrites = _meter.CreateCounter<long>("spindle.fastpath.inline_writes", "{operation}", "Small async writes to cached local files done on the caller's thread.");
        _fallbacks = _meter.CreateCounter<long>("spindle.engine.fallbacks", "{event}", "Times an engine was unavailable and another was used.");
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    internal void Operation(IoEngine engine, long bytes)
    {
        if (!_operations.Enabled)
        {
            return;
        }
        try
        {
            var tag = new KeyValuePair<string, object?>("engine", s_engineNames[(int)engine]);
            _operations.Add(1, tag);
            if (bytes > 0)
            {
                _bytes.Add(bytes, tag);
            }
        }
        catch (Exception)
        {
            // A listener failed; the operation it measured did not.
        }
    }

    internal void Submission() => Add(_submissions);

    internal void FastPathHit() => Add(_fastPathHits);

    internal void InlineWrite() => Add(_inlineWrites);

    internal void Fallback() => Add(_fallbacks);

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void Add(Counter<long> counter)
    {
        if (!counter.Enabled)
        {
            return;
        }
        try
        {
            counter.Add(1);
        }
        catch (Exception)
        {
            // As in Operation.
        }
    }
}

/// <summary>Totals of <see cref="SpindleMetrics"/> at one moment.</summary>
internal readonly record struct MetricsSnapshot(long Operations, long Bytes, long Submissions, long FastPathHits, long Fallbacks, long InlineWrites = 0);
