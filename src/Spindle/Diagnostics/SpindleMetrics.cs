using System.Diagnostics;
using System.Diagnostics.Metrics;
using System.Runtime.CompilerServices;
using Spindle.Interop;

namespace Spindle.Diagnostics;

/// <summary>Which way the bytes of an operation go; the values of OpenTelemetry's <c>disk.io.direction</c> attribute.</summary>
internal enum IoDirection : byte
{
    Read,
    Write,
}

/// <summary>How an operation reached the kernel; the values of the <c>spindle.io.mechanism</c> attribute.</summary>
internal enum IoMechanism : byte
{
    /// <summary>A system call on the caller's thread.</summary>
    Inline,

    /// <summary>A page-cache copy on the caller's thread (a non-blocking cached read, a small buffered write).</summary>
    FastPath,

    /// <summary>A system call on a thread-pool thread.</summary>
    Pool,

    /// <summary>A system call on one of Spindle's threads for calls that may wait for ever.</summary>
    Blocking,

    /// <summary>An io_uring submission.</summary>
    Ring,
}

/// <summary>
/// The <c>Spindle</c> meter: what Spindle actually did, for dashboards and for tests that prove which
/// engine ran (they listen to it like any other listener).
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

    /// <summary>The attribute naming how the operation ran: <c>inline</c>, <c>fastpath</c>, <c>pool</c>, <c>blocking</c> or <c>ring</c>.</summary>
    internal const string MechanismTag = "spindle.io.mechanism";

    /// <summary>OpenTelemetry's attribute for the direction of disk I/O: <c>read</c> or <c>write</c>.</summary>
    internal const string DirectionTag = "disk.io.direction";

    /// <summary>The name of the operation duration histogram (seconds).</summary>
    internal const string DurationName = "spindle.io.operation.duration";

    // The io_uring_enter calls, which the meter observes when a listener asks (never recorded on the ring's thread);
    // counted per thread, so that counting costs no atomic instruction and the rings share no cache line.
    private static readonly ThreadCounter s_submissionCount = new();

    // The meter's instruments, created when Spindle's assemblies are loaded (see DependencyLoader); null
    // before, or when the meter's assembly could not be loaded (then only the totals count).
    private static SpindleInstruments? s_instruments;
    private static readonly object s_createGate = new();

    // Recording happens after I/O that succeeded, so nothing in it may fail: until DependencyLoader has
    // settled (a process out of descriptors at its first Spindle call), nothing is recorded, because even
    // the totals' code needs assemblies beyond the core library (System.Threading, System.Collections).
    private static bool Recording => DependencyLoader.Settled || DependencyLoader.TrySettle();

    internal static void Operation(IoEngine engine, IoDirection direction, long bytes, IoMechanism mechanism)
    {
        if (!Recording)
        {
            return;
        }
        Count(engine, direction, bytes, mechanism);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void Count(IoEngine engine, IoDirection direction, long bytes, IoMechanism mechanism)
    {
        // Checked here, so that with no listener the meter costs no call.
        if (s_instruments is { OperationsEnabled: true } instruments)
        {
            instruments.Operation(engine, direction, bytes, mechanism);
        }
    }

    /// <summary>A timestamp to pass to <see cref="Duration"/> when a listener records durations, else 0 (no clock read).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static long StartTiming() => s_instruments is { DurationEnabled: true } ? Stopwatch.GetTimestamp() : 0;

    /// <summary>Records the time since <paramref name="started"/> (from <see cref="StartTiming"/>); nothing when it is 0.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void Duration(long started, IoEngine engine, IoDirection direction)
    {
        if (started != 0)
        {
            s_instruments?.Duration(started, engine, direction);
        }
    }

    /// <summary>
    /// An io_uring_enter (the ring thread): only the total counts here; the meter observes it
    /// when a listener asks, on the listener's thread, so no listener ever runs on the ring thread.
    /// </summary>
    internal static void Submission()
    {
        if (Recording)
        {
            s_submissionCount.Add(1);
        }
    }

    /// <summary>The io_uring_enter calls so far (what the meter's observable counter reports).</summary>
    internal static long Submissions => s_submissionCount.Read();

    internal static void FastPathHit()
    {
        if (Recording)
        {
            s_instruments?.FastPathHit();
        }
    }

    internal static void InlineWrite()
    {
        if (Recording)
        {
            s_instruments?.InlineWrite();
        }
    }

    internal static void Fallback()
    {
        if (Recording)
        {
            s_instruments?.Fallback();
        }
    }

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
    private readonly Meter _meter = new(SpindleMetrics.MeterName, LibraryVersion.Value);
    private readonly Counter<long> _operations;
    private readonly Counter<long> _bytes;
    private readonly Histogram<double> _duration;
    private readonly ObservableCounter<long> _submissions;
    private readonly Counter<long> _fastPathHits;
    private readonly Counter<long> _inlineWrites;
    private readonly Counter<long> _fallbacks;

    // Tag values are cached objects so that recording never boxes or allocates.
    private static readonly object[] s_engineNames = ["auto", "sync", "threadpool", "iouring"];
    private static readonly object[] s_directionNames = ["read", "write"];
    private static readonly object[] s_mechanismNames = ["inline", "fastpath", "pool", "blocking", "ring"];

    internal SpindleInstruments()
    {
        _operations = _meter.CreateCounter<long>("spindle.io.operations", "{operation}", "File operations issued to the kernel (system calls or io_uring submissions entries).");
        _bytes = _meter.CreateCounter<long>("spindle.io.bytes", "By", "Bytes read or written.");
        _duration = _meter.CreateHistogram<double>(SpindleMetrics.DurationName, "s",
            "Duration of file operations: each synchronous read or write, and each asynchronous SpindleRandomAccess read or write from the call to its completion.",
            tags: null,
            advice: new InstrumentAdvice<double> { HistogramBucketBoundaries = [0.000_005, 0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] });
        _submissions = _meter.CreateObservableCounter("spindle.io_uring.enters", static () => SpindleMetrics.Submissions, "{call}", "io_uring_enter calls.");
        _fastPathHits = _meter.CreateCounter<long>("spindle.fastpath.hits", "{operation}", "Async reads completed synchronously from the page cache.");
        _inlineWrites = _meter.CreateCounter<long>("spindle.fastpath.inline_writes", "{operation}", "Small async writes to cached local files done on the caller's thread.");
        _fallbacks = _meter.CreateCounter<long>("spindle.engine.fallbacks", "{event}", "Times an engine was unavailable and another was used.");
    }

    internal bool DurationEnabled => _duration.Enabled;

    internal bool OperationsEnabled => _operations.Enabled || _bytes.Enabled;

    [MethodImpl(MethodImplOptions.NoInlining)]
    internal void Operation(IoEngine engine, IoDirection direction, long bytes, IoMechanism mechanism)
    {
        try
        {
            var engineTag = new KeyValuePair<string, object?>(SpindleMetrics.EngineTag, s_engineNames[(int)engine]);
            var directionTag = new KeyValuePair<string, object?>(SpindleMetrics.DirectionTag, s_directionNames[(int)direction]);
            var mechanismTag = new KeyValuePair<string, object?>(SpindleMetrics.MechanismTag, s_mechanismNames[(int)mechanism]);
            _operations.Add(1, engineTag, directionTag, mechanismTag);
            if (bytes > 0)
            {
                _bytes.Add(bytes, engineTag, directionTag, mechanismTag);
            }
        }
        catch (Exception)
        {
            // A listener failed; the operation it measured did not.
        }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    internal void Duration(long started, IoEngine engine, IoDirection direction)
    {
        try
        {
            _duration.Record(Stopwatch.GetElapsedTime(started).TotalSeconds,
                new KeyValuePair<string, object?>(SpindleMetrics.EngineTag, s_engineNames[(int)engine]),
                new KeyValuePair<string, object?>(SpindleMetrics.DirectionTag, s_directionNames[(int)direction]));
        }
        catch (Exception)
        {
            // As in Operation.
        }
    }

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
