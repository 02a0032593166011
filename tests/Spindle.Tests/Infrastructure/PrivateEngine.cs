using Spindle.Engines.IoUring;

namespace Spindle.Tests.Infrastructure;

/// <summary>A second io_uring engine with a ring and threads of its own, which nothing but the test uses.</summary>
internal static class PrivateEngine
{
    /// <summary>The engine, or null when the kernel gives no ring.</summary>
    internal static IoUringEngine? Create()
    {
        var engine = new IoUringEngine(new RingThread());
        return engine.Thread.Start(engine, out _) ? engine : null;
    }
}
