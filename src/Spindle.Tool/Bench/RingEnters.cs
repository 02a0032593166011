using System.Diagnostics.Metrics;

namespace Spindle.Tool.Bench;

/// <summary>
/// The <c>io_uring_enter</c> calls Spindle has made in this process so far, read from its meter's observable
/// counter <c>spindle.io_uring.enters</c> as any user's listener would read it: read before and after a measured
/// batch, the difference over the batch's operations is the row's enters per operation. System.IO makes none.
/// </summary>
/// <remarks>
/// The listener enables that one instrument only, so the meter's per-operation counters stay off and cost the
/// measured code nothing; reading it runs the counter's callback on the reading thread, outside the batch.
/// </remarks>
public sealed class RingEnters : IDisposable
{
    private const string MeterName = "Spindle";
    private const string InstrumentName = "spindle.io_uring.enters";

    private readonly MeterListener _listener = new();
    private long _total = -1;   // the last observed total; -1 until the instrument is published

    /// <summary>Starts listening; the instrument appears with Spindle's first call, so a read before it says -1.</summary>
    public RingEnters()
    {
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (instrument.Meter.Name == MeterName && instrument.Name == InstrumentName)
            {
                listener.EnableMeasurementEvents(instrument);
            }
        };
        _listener.SetMeasurementEventCallback<long>((_, value, _, _) => _total = value);
        _listener.Start();
    }

    /// <summary>The calls so far, or -1 when Spindle's meter is not there (no Spindle call yet, or its meter could not load).</summary>
    public long Read()
    {
        _listener.RecordObservableInstruments();
        return _total;
    }

    /// <summary>Stops listening.</summary>
    public void Dispose() => _listener.Dispose();
}
