using Spindle.Engines;
using Spindle.Engines.FastPath;
using Xunit;

namespace Spindle.Tests.Engines;

/// <summary>The router's rows for data syncs, durable writes and batch reads (docs/engine-v2.md, rows 11–13), from handle facts alone.</summary>
public class DurableRouterTableTests
{
    private static HandleFacts DirectFile() => new();
    private static HandleFacts BufferedFile() => new() { BufferedFile = true, NonBlockingReads = true, CachedWrites = true };
    private static HandleFacts Pipe() => new() { MayBlockIndefinitely = true };

    [Fact]
    public void A_lone_data_sync_runs_on_a_pool_thread_and_overlapping_ones_on_the_ring()
    {
        Assert.Equal(Mechanism.Pool, Router.RouteDurable(RequestKind.DataSync, BufferedFile(), 0, -1, othersInFlight: false));
        Assert.Equal(Mechanism.Ring, Router.RouteDurable(RequestKind.DataSync, BufferedFile(), 0, -1, othersInFlight: true));
        Assert.Equal(Mechanism.Pool, Router.RouteDurable(RequestKind.DataSync, DirectFile(), 0, -1, othersInFlight: false));
        Assert.Equal(Mechanism.Ring, Router.RouteDurable(RequestKind.DataSync, DirectFile(), 0, -1, othersInFlight: true));
        // A pipe's sync fails at once with EINVAL (taken as success); it never holds a pool thread.
        Assert.Equal(Mechanism.Ring, Router.RouteDurable(RequestKind.DataSync, Pipe(), 0, -1, othersInFlight: false));
    }

    [Fact]
    public void Durable_writes_of_buffered_files_run_on_pool_threads_and_of_O_DIRECT_files_on_the_ring_once_they_overlap()
    {
        foreach (bool others in new[] { false, true })
        {
            // io-wq would run one file's buffered durable writes one at a time.
            Assert.Equal(Mechanism.Pool, Router.RouteDurable(RequestKind.WriteDurable, BufferedFile(), 4096, 0, others));
            Assert.Equal(Mechanism.Done, Router.RouteDurable(RequestKind.WriteDurable, DirectFile(), 0, 0, others));
            Assert.Equal(Mechanism.Inline, Router.RouteDurable(RequestKind.WriteDurable, new HandleFacts { SynchronousBackend = true }, 4096, 0, others));
            Assert.Equal(Mechanism.Inline, Router.RouteDurable(RequestKind.WriteDurable, new HandleFacts { NonBlocking = true, MayBlockIndefinitely = true }, 4096, -1, others));
            Assert.Equal(Mechanism.Ring, Router.RouteDurable(RequestKind.WriteDurable, Pipe(), 4096, -1, others));
        }
        Assert.Equal(Mechanism.Pool, Router.RouteDurable(RequestKind.WriteDurable, DirectFile(), 4096, 0, othersInFlight: false));
        Assert.Equal(Mechanism.Ring, Router.RouteDurable(RequestKind.WriteDurable, DirectFile(), 4096, 0, othersInFlight: true));
    }

    [Fact]
    public void A_batch_read_is_routed_as_a_read_that_overlaps_others()
    {
        Assert.Equal(Mechanism.Ring, Router.RouteDurable(RequestKind.ReadBatch, DirectFile(), 4096, 0, othersInFlight: true));
        Assert.Equal(Mechanism.Inline, Router.RouteDurable(RequestKind.ReadBatch, DirectFile(), 0, 0, othersInFlight: true));
        Assert.Equal(Mechanism.Inline, Router.RouteDurable(RequestKind.ReadBatch, new HandleFacts { SynchronousBackend = true }, 4096, 0, othersInFlight: true));
        Assert.Equal(Mechanism.Blocking, Router.RouteDurable(RequestKind.ReadBatch, new HandleFacts { CharacterDevice = true, MayBlockIndefinitely = true }, 4096, -1, othersInFlight: true));
    }
}
