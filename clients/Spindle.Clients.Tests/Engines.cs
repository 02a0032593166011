namespace Spindle.Clients.Tests;

/// <summary>Every Spindle engine, for theories that must hold on each.</summary>
public static class Engines
{
    public static TheoryData<IoEngine> All => new() { IoEngine.Sync, IoEngine.ThreadPool, IoEngine.IoUring, IoEngine.Auto };

    /// <summary>Every engine with SpindleDevice's default (the page cache), and Auto with O_DIRECT.</summary>
    public static TheoryData<IoEngine, bool> AllAndAutoDirect => new()
    {
        { IoEngine.Sync, false }, { IoEngine.ThreadPool, false }, { IoEngine.IoUring, false }, { IoEngine.Auto, false }, { IoEngine.Auto, true },
    };

    /// <summary>Every engine, with the page cache (SpindleDevice's default) and with O_DIRECT.</summary>
    public static TheoryData<IoEngine, bool> AllWithDirectIO
    {
        get
        {
            var data = new TheoryData<IoEngine, bool>();
            foreach (IoEngine engine in new[] { IoEngine.Sync, IoEngine.ThreadPool, IoEngine.IoUring, IoEngine.Auto })
            {
                data.Add(engine, false);
                data.Add(engine, true);
            }
            return data;
        }
    }
}
