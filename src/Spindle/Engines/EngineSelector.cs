using Spindle.Diagnostics;
using Spindle.Engines.IoUring;
using Spindle.Engines.ThreadPool;

namespace Spindle.Engines;

/// <summary>
/// Maps an <see cref="IoEngine"/> request to the engine that serves it, and resolves
/// <see cref="IoEngine.Auto"/> once per process: the <c>Spindle.IoEngine</c> AppContext value, else
/// the <c>SPINDLE_IO_ENGINE</c> environment variable, else io_uring when the kernel allows it, else
/// the thread pool.
/// </summary>
internal static class EngineSelector
{
    /// <summary>The AppContext value (runtimeconfig.json) naming the process-wide engine.</summary>
    internal const string AppContextName = "Spindle.IoEngine";

    /// <summary>The environment variable naming the process-wide engine.</summary>
    internal const string EnvironmentName = "SPINDLE_IO_ENGINE";

    private static FileIoEngine? s_default; // resolved on first use

    /// <summary>The engine <see cref="IoEngine.Auto"/> resolves to in this process.</summary>
    internal static FileIoEngine Default => s_default ??= ResolveDefault();

    internal static FileIoEngine Get(IoEngine requested) => requested switch
    {
        IoEngine.Sync => SyncEngine.Instance,
        IoEngine.ThreadPool => ThreadPoolEngine.Instance,
        IoEngine.IoUring => IoUringOrFallback(),
        _ => Default,
    };

    /// <summary>Whether io_uring can be used in this process.</summary>
    internal static bool IsIoUringAvailable => IoUringOrNull() is not null;

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
        IoEngine configured = Parse(AppContext.GetData(AppContextName) as string)
            ?? Parse(Environment.GetEnvironmentVariable(EnvironmentName))
            ?? IoEngine.Auto;
        return configured == IoEngine.Auto ? IoUringOrFallback() : Get(configured);
    }

    private static FileIoEngine IoUringOrFallback()
    {
        FileIoEngine? ring = IoUringOrNull();
        if (ring is not null)
        {
            return ring;
        }
        SpindleMetrics.Fallback();
        return ThreadPoolEngine.Instance;
    }

    private static FileIoEngine? IoUringOrNull() => IoUringEngine.Instance;
}
