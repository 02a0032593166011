using Spindle.Engines;
using Spindle.Engines.FastPath;
using Xunit;

namespace Spindle.Tests.Engines;

/// <summary>The router's decision table, row by row, from handle facts alone (docs/engine-v2.md explains each row).</summary>
public class RouterTableTests
{
    private static HandleFacts DirectFile() => new();
    private static HandleFacts BufferedFile() => new() { BufferedFile = true, NonBlockingReads = true, CachedWrites = true };
    private static HandleFacts Pipe() => new() { MayBlockIndefinitely = true };

    [Fact]
    public void A_lone_request_on_a_file_runs_on_a_pool_thread_and_overlapping_ones_on_the_ring()
    {
        foreach (RequestKind kind in new[] { RequestKind.Read, RequestKind.Write, RequestKind.ReadScatter, RequestKind.WriteGather })
        {
            Assert.Equal(Mechanism.Pool, Router.Route(kind, DirectFile(), 4096, 0, useFastPath: true, othersInFlight: false));
            Assert.Equal(Mechanism.Ring, Router.Route(kind, DirectFile(), 4096, 0, useFastPath: true, othersInFlight: true));
        }
        // An uncached buffered read too (the fast path had its chance before).
        Assert.Equal(Mechanism.Pool, Router.Route(RequestKind.Read, BufferedFile(), 4096, 0, useFastPath: true, othersInFlight: false));
        Assert.Equal(Mechanism.Ring, Router.Route(RequestKind.Read, BufferedFile(), 4096, 0, useFastPath: true, othersInFlight: true));
    }

    [Fact]
    public void Handles_that_may_wait_for_ever_go_to_the_ring_even_alone()
    {
        // A pool thread would wait with them for ever; the ring's second lane waits instead.
        Assert.Equal(Mechanism.Ring, Router.Route(RequestKind.Read, Pipe(), 4096, -1, useFastPath: true, othersInFlight: false));
        Assert.Equal(Mechanism.Ring, Router.Route(RequestKind.Write, Pipe(), 4096, -1, useFastPath: true, othersInFlight: false));
    }

    [Fact]
    public void Rows_that_do_not_depend_on_load_decide_the_same_alone_and_overlapping()
    {
        foreach (bool others in new[] { false, true })
        {
            Assert.Equal(Mechanism.Inline, Router.Route(RequestKind.Read, new HandleFacts { SynchronousBackend = true }, 4096, 0, true, others));
            Assert.Equal(Mechanism.Inline, Router.Route(RequestKind.Read, new HandleFacts { FailsAtOnce = true, MayBlockIndefinitely = true }, 4096, -1, true, others));
            Assert.Equal(Mechanism.Inline, Router.Route(RequestKind.Read, new HandleFacts { NonBlocking = true, MayBlockIndefinitely = true }, 4096, -1, true, others));
            Assert.Equal(Mechanism.Inline, Router.Route(RequestKind.Read, DirectFile(), 0, 0, true, others));
            Assert.Equal(Mechanism.Pool, Router.Route(RequestKind.Read, new HandleFacts { CharacterDevice = true, MayBlockIndefinitely = true }, 4096, -1, true, others));
            Assert.Equal(Mechanism.Done, Router.Route(RequestKind.Write, DirectFile(), 0, 0, true, others));
            Assert.Equal(Mechanism.FastPath, Router.Route(RequestKind.Write, BufferedFile(), 4096, 0, true, others));
            Assert.Equal(Mechanism.Pool, Router.Route(RequestKind.Write, BufferedFile(), 1 << 20, 0, true, others));
            Assert.Equal(Mechanism.Ring, Router.Route(RequestKind.Flush, DirectFile(), 0, -1, true, others));
        }
    }
}
