namespace Spindle.Engines;

/// <summary>
/// The blocking system call on the caller's thread (<see cref="InlineExecutor"/>); every operation on a regular file or
/// block device completes synchronously. The router sends transfers on pipes, sockets and character devices to threads
/// of their own (<see cref="Mechanism.Blocking"/>): a read there may wait for a write the same caller makes next, and
/// blocking the caller would deadlock where System.IO works.
/// </summary>
internal sealed class SyncEngine : FileIoEngine
{
    internal static readonly SyncEngine Instance = new();

    public override IoEngine Kind => IoEngine.Sync;
}
