using System.Runtime.InteropServices;

namespace Spindle.Tool.Cli;

/// <summary>
/// Turns SIGINT (Ctrl-C) and SIGTERM (<c>kill</c>, <c>timeout</c>, CI cancellation) into a cancellation:
/// the first signal keeps the process alive so that the command stops between measurements, removes its
/// temporary files and exits with 128 + the signal's number; a second signal terminates at once.
/// </summary>
public sealed class StopSignals : IDisposable
{
    private readonly CancellationTokenSource _cancellation = new();
    private readonly PosixSignalRegistration[] _registrations;
    private PosixSignal? _received;   // the first signal, null until one arrives

    /// <summary>Registers the handlers.</summary>
    public StopSignals()
    {
        _registrations =
        [
            PosixSignalRegistration.Create(PosixSignal.SIGINT, OnSignal),
            PosixSignalRegistration.Create(PosixSignal.SIGTERM, OnSignal),
        ];
    }

    /// <summary>Cancelled by the first signal.</summary>
    public CancellationToken Token => _cancellation.Token;

    /// <summary>128 + the number of the signal received: 130 for SIGINT, 143 for SIGTERM (as a shell reports a process it stopped).</summary>
    public int ExitCode => _received == PosixSignal.SIGTERM ? 128 + 15 : Program.Cancelled;

    /// <summary>The signal as a person names it.</summary>
    public string Name => _received == PosixSignal.SIGTERM ? "SIGTERM" : "Ctrl-C";

    /// <summary>Unregisters the handlers.</summary>
    public void Dispose()
    {
        foreach (PosixSignalRegistration registration in _registrations)
        {
            registration.Dispose();
        }
        _cancellation.Dispose();
    }

    private void OnSignal(PosixSignalContext context)
    {
        if (_received is not null)
        {
            return;   // the second signal: the default action ends the process
        }
        _received = context.Signal;
        context.Cancel = true;
        _cancellation.Cancel();
    }
}
