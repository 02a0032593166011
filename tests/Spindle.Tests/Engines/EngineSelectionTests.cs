using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Engines;
using Spindle.Engines.IoUring;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Engines;

public class EngineSelectionTests
{
    [Fact]
    public void The_default_engine_is_resolved_and_says_which_one_runs()
    {
        IoEngine engine = SpindleRandomAccess.DefaultEngine;
        Console.WriteLine($"Default engine: {engine}; io_uring available: {SpindleRandomAccess.IsIoUringAvailable} {IoUringEngine.UnavailableReason}"
            + (IoUringEngine.Instance is { } ring ? $" (setup flags 0x{ring.Thread.SetupFlags:x})" : ""));
        Assert.NotEqual(IoEngine.Auto, engine);
        Assert.Equal(engine, EngineSelector.Default.Kind);
        string? configured = Environment.GetEnvironmentVariable(SpindleSwitches.IoEngineVariable);
        if (string.IsNullOrEmpty(configured) && AppContext.GetData(SpindleSwitches.IoEngineName) is null)
        {
            Assert.Equal(SpindleRandomAccess.IsIoUringAvailable ? IoEngine.IoUring : IoEngine.ThreadPool, engine);
        }
    }

    [Fact]
    public void A_forced_engine_is_the_engine_that_runs()
    {
        Assert.Equal(IoEngine.Sync, EngineSelector.Get(IoEngine.Sync).Kind);
        Assert.Equal(IoEngine.ThreadPool, EngineSelector.Get(IoEngine.ThreadPool).Kind);
        Assert.Equal(SpindleRandomAccess.IsIoUringAvailable ? IoEngine.IoUring : IoEngine.ThreadPool, EngineSelector.Get(IoEngine.IoUring).Kind);
    }

    [Theory]
    [InlineData("sync", IoEngine.Sync)]
    [InlineData("ThreadPool", IoEngine.ThreadPool)]
    [InlineData(" iouring ", IoEngine.IoUring)]
    [InlineData("io_uring", IoEngine.IoUring)]
    [InlineData("auto", IoEngine.Auto)]
    [InlineData("bogus", null)]
    [InlineData(null, null)]
    public void Engine_names_parse(string? name, IoEngine? expected) => Assert.Equal(expected, EngineSelector.Parse(name));

    [Fact]
    public async Task Io_uring_batches_concurrent_operations_into_fewer_enters()
    {
        if (!EngineCases.ReportIoUring(IoEngine.IoUring))
        {
            return;
        }
        using var dir = new TempDirectory();
        using SafeFileHandle handle = SpindleFile.OpenHandle(dir.File("f"), FileMode.Create, FileAccess.ReadWrite);
        const int Count = 2000;
        byte[] data = new byte[Count * 512];
        new Random(5).NextBytes(data);

        // A ring of its own: the process-wide counters also count other tests' enters.
        if (PrivateEngine.Create() is not IoUringEngine engine)
        {
            return;
        }
        long before = EngineCounts.Of(engine.Thread).SubmittingEnters;
        var tasks = new Task[Count];
        // The writes wait in their lane until all have started, as when they overlap on a busy ring: whether they
        // overlap by themselves depends on how fast the kernel finishes each one against how fast this thread starts
        // the next, which a loaded machine turns around.
        EngineCounts.Of(engine.Thread).HoldPending = true;
        try
        {
            for (int i = 0; i < Count; i++)
            {
                // Without the inline write fast path, so that the writes go through the ring.
                tasks[i] = engine.WriteAsync(handle, data.AsMemory(i * 512, 512), i * 512L, useFastPath: false, default).AsTask();
            }
        }
        finally
        {
            EngineCounts.Of(engine.Thread).HoldPending = false;
        }
        engine.Thread.Flush();
        await Task.WhenAll(tasks).WaitAsync(TimeSpan.FromSeconds(30));
        long enters = EngineCounts.Of(engine.Thread).SubmittingEnters - before;

        Console.WriteLine($"{Count} io_uring writes took {enters} submitting io_uring_enter calls");
        Assert.True(enters > 0, "io_uring_enter was never called: the ring did not run");
        Assert.True(enters < Count, $"{enters} enters for {Count} operations: no batching");
        Assert.Equal(data, File.ReadAllBytes(dir.File("f")));
    }
}
