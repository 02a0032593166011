using System.Runtime.CompilerServices;
using Spindle.Diagnostics;
using Spindle.Engines.IoUring;
using Spindle.Engines.ThreadPool;
using Spindle.Interop;

namespace Spindle.Engines;

/// <summary>
/// Maps an <see cref="IoEngine"/> to the engine that serves it, and resolves <see cref="IoEngine.Auto"/> once per
/// process: the <c>Spindle.IoEngine</c> AppContext value, else <c>SPINDLE_IO_ENGINE</c>, else io_uring when the
/// kernel allows it, else the thread pool.
/// </summary>
internal static class EngineSelector
{
    private static FileIoEngine? s_default; // resolved on first use; not while io_uring is only short of a resource

    /// <summary>The engine <see cref="IoEngine.Auto"/> resolves to in this process.</summary>
    /// <exception cref="IOException">The process is out of descriptors before Spindle could load what its engines need.</exception>
    internal static FileIoEngine Default => s_default ?? ResolveDefault();

    /// <exception cref="IOException">The process is out of descriptors before Spindle could load what its engines need.</exception>
    internal static FileIoEngine Get(IoEngine requested)
    {
        if (!DependencyLoader.Settled)
        {
            EnsureDependencies();
        }
        return requested switch
        {
            IoEngine.Sync => SyncEngine.Instance,
            IoEngine.ThreadPool => ThreadPoolEngine.Instance,
            IoEngine.IoUring => IoUringOrFallback(),
            _ => Default,
        };
    }

    /// <summary>Whether io_uring can be used in this process.</summary>
    internal static bool IsIoUringAvailable => IoUringEngine.Instance is not null;

    /// <summary>Parses an engine name (sync, threadpool, iouring, auto; any case); null if unknown.</summary>
    internal static IoEngine? Parse(string? name) => name?.Trim().ToLowerInvariant() switch
    {
        "sync" => IoEngine.Sync,
        "threadpool" or "thread-pool" or "thread_pool" => IoEngine.ThreadPool,
        "iouring" or "io_uring" or "io-uring" => IoEngine.IoUring,
        "auto" or "" => IoEngine.Auto,
        _ => null,
    };

    private static FileIoEngine ResolveDefault()
    {
        (string? name, string source) = SpindleSwitches.IoEngine();
        IoEngine? parsed = Parse(name);
        IoEngine configured = parsed ?? IoEngine.Auto;
        // Get first: it loads what the event source needs (or fails the call as an open would).
        FileIoEngine engine = Get(configured == IoEngine.Auto ? IoEngine.IoUring : configured);
        if (parsed is null && name is not null)
        {
            ReportUnknown(name, source);
        }
        // A fallback because io_uring could not start for want of descriptors or memory holds for this
        // call only: a later one starts the ring when they are back.
        if (configured is not (IoEngine.Auto or IoEngine.IoUring) || engine.Kind == IoEngine.IoUring || IoUringEngine.RefusedForGood)
        {
            s_default = engine;
        }
        return engine;
    }

    // A name nobody knows (a typo) is reported (an event and the fallback counter), then Auto does the I/O. Apart, so
    // that the event source's assembly is not needed before Get has loaded it.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void ReportUnknown(string name, string source)
    {
        SpindleEventSource.Log.UnknownEngine(name, source);
        SpindleMetrics.Fallback();
    }

    // The engines need assemblies beyond the core library; were one first loaded with no descriptor free, the runtime
    // would remember the failure for the process. So such a call fails alone, as an open would, and the next loads them.
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static void EnsureDependencies()
    {
        if (!DependencyLoader.TrySettle())
        {
            throw IoErrors.ForErrno(Errno.EMFILE, path: null);
        }
    }

    private static FileIoEngine IoUringOrFallback()
    {
        if (IoUringEngine.Instance is { } ring)
        {
            return ring;
        }
        SpindleMetrics.Fallback();
        return ThreadPoolEngine.Instance;
    }
}
