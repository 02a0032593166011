namespace Spindle.Engines;

/// <summary>
/// The blocking system call on the caller's thread (<see cref="InlineExecutor"/>), except transfers on pipes, sockets
/// and devices (<see cref="Mechanism.Blocking"/>): a read there may wait for the caller's next write, a deadlock.
/// </summary>
internal sealed class SyncEngine : FileIoEngine
{
    internal static readonly SyncEngine Instance = new();

    public override IoEngine Kind => IoEngine.Sync;
}
