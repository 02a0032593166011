using System.Diagnostics.Tracing;

namespace Spindle.Diagnostics;

/// <summary>
/// The <c>Spindle</c> event source: events that explain a decision, for <c>dotnet-trace</c>, an
/// <see cref="EventListener"/> or any EventPipe consumer (<c>dotnet-trace collect --providers Spindle</c>).
/// </summary>
[EventSource(Name = SourceName)]
internal sealed class SpindleEventSource : EventSource
{
    /// <summary>The name consumers enable.</summary>
    internal const string SourceName = "Spindle";

    /// <summary>The id of <see cref="IoUringRefused"/>.</summary>
    internal const int IoUringRefusedId = 1;

    /// <summary>The id of <see cref="UnknownEngine"/>.</summary>
    internal const int UnknownEngineId = 2;

    internal static readonly SpindleEventSource Log = new();

    private SpindleEventSource()
    {
    }

    /// <summary>The kernel refused io_uring (or a ring could not be set up); Spindle uses the thread-pool engine instead.</summary>
    /// <param name="reason">What failed, in words.</param>
    /// <param name="errno">The errno of the failed call (EPERM: disabled by <c>kernel.io_uring_disabled</c> or seccomp; ENOSYS: no io_uring in this kernel).</param>
    [Event(IoUringRefusedId, Level = EventLevel.Warning, Message = "io_uring refused ({1}): {0}; the thread-pool engine is used instead")]
    public void IoUringRefused(string reason, int errno) => WriteEvent(IoUringRefusedId, reason, errno);

    /// <summary>The configured engine name is not one Spindle knows; <c>Auto</c> is used instead.</summary>
    /// <param name="name">The name as configured.</param>
    /// <param name="source">Where it was configured: the AppContext value or the environment variable.</param>
    [Event(UnknownEngineId, Level = EventLevel.Warning, Message = "Unknown engine name '{0}' in {1} (known: sync, threadpool, iouring, auto); Auto is used instead")]
    public void UnknownEngine(string name, string source) => WriteEvent(UnknownEngineId, name, source);
}
