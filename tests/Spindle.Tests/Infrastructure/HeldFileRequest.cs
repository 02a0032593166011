using Spindle.Engines;

namespace Spindle.Tests.Infrastructure;

/// <summary>
/// A request on a file counted as in flight until disposed (<see cref="FileRequestsInFlight"/>): every data sync and
/// durable write then sees another in flight, and goes to the ring rather than a pool thread.
/// </summary>
internal readonly struct HeldFileRequest : IDisposable
{
    /// <summary>Counts the request.</summary>
    internal static HeldFileRequest Hold()
    {
        FileRequestsInFlight.Enter();
        return default;
    }

    /// <summary>Lets go of it.</summary>
    public void Dispose() => FileRequestsInFlight.Leave();
}
