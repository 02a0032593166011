using Spindle.Engines;

namespace Spindle.Tests.Engines;

/// <summary>The engines every engine test runs on, and how to reach each one without the fast path.</summary>
public static class EngineCases
{
    public static TheoryData<IoEngine> All => new() { IoEngine.Sync, IoEngine.ThreadPool, IoEngine.IoUring };

    public static TheoryData<IoEngine> Async => new() { IoEngine.ThreadPool, IoEngine.IoUring };

    /// <summary>The engine that really serves a forced request (io_uring falls back when the kernel refuses it).</summary>
    internal static FileIoEngine Resolve(IoEngine engine) => EngineSelector.Get(engine);

    /// <summary>Prints why an io_uring test runs on the fallback; returns whether io_uring is real.</summary>
    public static bool ReportIoUring(IoEngine engine)
    {
        if (engine == IoEngine.IoUring && !SpindleRandomAccess.IsIoUringAvailable)
        {
            Console.WriteLine("io_uring is not available on this kernel: the IoUring case runs on the thread-pool fallback.");
            return false;
        }
        return true;
    }
}
