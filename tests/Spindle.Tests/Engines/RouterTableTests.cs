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
    public void Requests_on_files_and_block_devices_go_to_the_ring_whatever_their_size_and_alone_too()
    {
        // A lone request goes to the ring too: the pool thread that runs its continuation waits for the next completion
        // itself (the row that sent it to a pool thread is gone, and so is the one for transfers of 256 KiB or more).
        foreach (RequestKind kind in new[] { RequestKind.Read, RequestKind.Write, RequestKind.ReadScatter, RequestKind.WriteGather })
        {
            Assert.Equal(Mechanism.Ring, Router.Route(kind, DirectFile(), 4096, 0, useFastPath: true, IoEngine.IoUring));
            Assert.Equal(Mechanism.Ring, Router.Route(kind, DirectFile(), 1 << 20, 0, useFastPath: true, IoEngine.IoUring));
            Assert.Equal(Mechanism.Ring, Router.Route(kind, Pipe(), 4096, -1, useFastPath: true, IoEngine.IoUring));
        }
        // An uncached buffered read too (the fast path had its chance before).
        Assert.Equal(Mechanism.Ring, Router.Route(RequestKind.Read, BufferedFile(), 4096, 0, useFastPath: true, IoEngine.IoUring));
        Assert.Equal(Mechanism.Ring, Router.RouteDurable(RequestKind.ReadBatch, DirectFile(), 1 << 20, 0, othersInFlight: true));
        // A durable write keeps its own row 12: alone on a pool thread, overlapping on the ring.
        Assert.Equal(Mechanism.Pool, Router.RouteDurable(RequestKind.WriteDurable, DirectFile(), 4096, 0, othersInFlight: false));
        Assert.Equal(Mechanism.Ring, Router.RouteDurable(RequestKind.WriteDurable, DirectFile(), 1 << 20, 0, othersInFlight: true));
    }

    [Fact]
    public void Files_whose_file_system_refuses_non_blocking_reads_run_on_pool_threads_even_when_requests_overlap()
    {
        // FUSE: io_uring would hand each request to a kernel worker, several times slower than a pool thread's call.
        var fuse = new HandleFacts { RefusesNonBlockingIo = true };
        var fuseBuffered = new HandleFacts { RefusesNonBlockingIo = true, BufferedFile = true };
        foreach (bool others in new[] { false, true })
        {
            foreach (RequestKind kind in new[] { RequestKind.Read, RequestKind.Write, RequestKind.ReadScatter, RequestKind.WriteGather })
            {
                Assert.Equal(Mechanism.Pool, Router.Route(kind, fuse, 4096, 0, useFastPath: true, IoEngine.IoUring));
                Assert.Equal(Mechanism.Pool, Router.Route(kind, fuseBuffered, 4096, 0, useFastPath: true, IoEngine.IoUring));
            }
            Assert.Equal(Mechanism.Pool, Router.RouteDurable(RequestKind.WriteDurable, fuse, 4096, 0, others));
            Assert.Equal(Mechanism.Pool, Router.RouteDurable(RequestKind.ReadBatch, fuse, 4096, 0, others));
            // What does not depend on the file system stays: a read of nothing, a write of nothing, a flush.
            Assert.Equal(Mechanism.Inline, Router.Route(RequestKind.Read, fuse, 0, 0, true, IoEngine.IoUring));
            Assert.Equal(Mechanism.Done, Router.Route(RequestKind.Write, fuse, 0, 0, true, IoEngine.IoUring));
            Assert.Equal(Mechanism.Ring, Router.Route(RequestKind.Flush, fuse, 0, -1, true, IoEngine.IoUring));
        }
    }

    [Fact]
    public void Handles_that_may_wait_for_ever_go_to_the_ring_even_alone()
    {
        // A pool thread would wait with them for ever; the ring's second lane waits instead.
        Assert.Equal(Mechanism.Ring, Router.Route(RequestKind.Read, Pipe(), 4096, -1, useFastPath: true, IoEngine.IoUring));
        Assert.Equal(Mechanism.Ring, Router.Route(RequestKind.Write, Pipe(), 4096, -1, useFastPath: true, IoEngine.IoUring));
    }

    [Fact]
    public void Rows_that_do_not_depend_on_load_decide_the_same_alone_and_overlapping()
    {
        foreach (bool others in new[] { false, true })
        {
            Assert.Equal(Mechanism.Inline, Router.Route(RequestKind.Read, new HandleFacts { SynchronousBackend = true }, 4096, 0, true, IoEngine.IoUring));
            // A copy larger than a hop runs on a pool thread, never on the ring (whose workers would do the same copy).
            Assert.Equal(Mechanism.Pool, Router.Route(RequestKind.Read, new HandleFacts { SynchronousBackend = true }, 1 << 20, 0, true, IoEngine.IoUring));
            Assert.Equal(Mechanism.Pool, Router.Route(RequestKind.Write, new HandleFacts { SynchronousBackend = true, BufferedFile = true, CachedWrites = true }, 1 << 20, 0, true, IoEngine.IoUring));
            Assert.Equal(Mechanism.Inline, Router.Route(RequestKind.Read, new HandleFacts { FailsAtOnce = true, MayBlockIndefinitely = true }, 4096, -1, true, IoEngine.IoUring));
            Assert.Equal(Mechanism.Inline, Router.Route(RequestKind.Read, new HandleFacts { NonBlocking = true, MayBlockIndefinitely = true }, 4096, -1, true, IoEngine.IoUring));
            Assert.Equal(Mechanism.Inline, Router.Route(RequestKind.Read, DirectFile(), 0, 0, true, IoEngine.IoUring));
            Assert.Equal(Mechanism.Blocking, Router.Route(RequestKind.Read, new HandleFacts { CharacterDevice = true, MayBlockIndefinitely = true }, 4096, -1, true, IoEngine.IoUring));
            Assert.Equal(Mechanism.Done, Router.Route(RequestKind.Write, DirectFile(), 0, 0, true, IoEngine.IoUring));
            Assert.Equal(Mechanism.FastPath, Router.Route(RequestKind.Write, BufferedFile(), 4096, 0, true, IoEngine.IoUring));
            Assert.Equal(Mechanism.Pool, Router.Route(RequestKind.Write, BufferedFile(), 1 << 20, 0, true, IoEngine.IoUring));
            Assert.Equal(Mechanism.Ring, Router.Route(RequestKind.Flush, DirectFile(), 0, -1, true, IoEngine.IoUring));
        }
    }

    [Fact]
    public void The_thread_pool_engine_copies_small_cached_writes_inline_and_gives_handles_that_may_wait_threads_of_their_own()
    {
        Assert.Equal(Mechanism.FastPath, Router.Route(RequestKind.Write, BufferedFile(), 4096, 0, true, IoEngine.ThreadPool));
        Assert.Equal(Mechanism.Pool, Router.Route(RequestKind.Write, BufferedFile(), 4096, 0, useFastPath: false, IoEngine.ThreadPool));
        Assert.Equal(Mechanism.Pool, Router.Route(RequestKind.Read, DirectFile(), 4096, 0, true, IoEngine.ThreadPool));
        Assert.Equal(Mechanism.Blocking, Router.Route(RequestKind.Read, Pipe(), 4096, -1, true, IoEngine.ThreadPool));
        Assert.Equal(Mechanism.Blocking, Router.Route(RequestKind.Read, Pipe(), 0, -1, true, IoEngine.ThreadPool));
        // Memory-backed storage: the copy on the caller's thread, as on the ring's engine (row 3), but never a flush.
        var memory = new HandleFacts { SynchronousBackend = true, BufferedFile = true, CachedWrites = true };
        foreach (RequestKind kind in new[] { RequestKind.Read, RequestKind.Write, RequestKind.ReadScatter, RequestKind.WriteGather })
        {
            Assert.Equal(Mechanism.Inline, Router.Route(kind, memory, EngineTunables.MaxInlineCopy, 0, true, IoEngine.ThreadPool));
            Assert.Equal(Mechanism.Pool, Router.Route(kind, memory, EngineTunables.MaxInlineCopy + 1, 0, true, IoEngine.ThreadPool));
        }
        Assert.Equal(Mechanism.Pool, Router.Route(RequestKind.Flush, memory, 0, -1, true, IoEngine.ThreadPool));
    }

    [Fact]
    public void A_flush_or_data_sync_of_a_file_on_a_memory_file_system_returns_on_the_callers_thread()
    {
        // tmpfs and ramfs have nothing to write back; a RAM block device (also a synchronous backend) still syncs on the ring.
        var tmpfs = new HandleFacts { MemoryFileSystem = true, SynchronousBackend = true, BufferedFile = true };
        var zram = new HandleFacts { SynchronousBackend = true };
        foreach (bool others in new[] { false, true })
        {
            Assert.Equal(Mechanism.Inline, Router.Route(RequestKind.Flush, tmpfs, 0, -1, true, IoEngine.IoUring));
            Assert.Equal(Mechanism.Inline, Router.RouteDurable(RequestKind.DataSync, tmpfs, 0, -1, others));
            Assert.Equal(Mechanism.Ring, Router.Route(RequestKind.Flush, zram, 0, -1, true, IoEngine.IoUring));
        }
        Assert.Equal(Mechanism.Ring, Router.RouteDurable(RequestKind.DataSync, zram, 0, -1, othersInFlight: true));
    }

    [Fact]
    public void The_synchronous_engine_runs_everything_inline_but_transfers_on_handles_that_may_wait()
    {
        Assert.Equal(Mechanism.Inline, Router.Route(RequestKind.Read, DirectFile(), 4096, 0, true, IoEngine.Sync));
        Assert.Equal(Mechanism.Inline, Router.Route(RequestKind.Write, BufferedFile(), 1 << 20, 0, true, IoEngine.Sync));
        Assert.Equal(Mechanism.Blocking, Router.Route(RequestKind.Read, Pipe(), 4096, -1, true, IoEngine.Sync));
        Assert.Equal(Mechanism.Inline, Router.Route(RequestKind.Read, Pipe(), 0, -1, true, IoEngine.Sync));
        Assert.Equal(Mechanism.Inline, Router.Route(RequestKind.Flush, Pipe(), 0, -1, true, IoEngine.Sync));
    }

    [Fact]
    public void Opens_without_truncation_or_exclusive_creation_try_the_lookup_cache_first_and_closes_of_Spindles_own_handles_go_to_the_ring()
    {
        const int O_WRONLY = 0x1, O_CREAT = 0x40, O_EXCL = 0x80, O_TRUNC = 0x200, O_APPEND = 0x400, O_CLOEXEC = 0x80000;
        Mechanism cached = OpenFastPath.Enabled ? Mechanism.FastPath : Mechanism.Ring;
        // Row 14: reads, writes of existing files, and creating opens that may find the file there (Create, OpenOrCreate, Append).
        Assert.Equal(cached, Router.RouteOpen(O_CLOEXEC));
        Assert.Equal(cached, Router.RouteOpen(O_WRONLY | O_CLOEXEC));
        Assert.Equal(cached, Router.RouteOpen(O_WRONLY | O_CREAT | O_CLOEXEC));
        Assert.Equal(cached, Router.RouteOpen(O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC));
        // Row 15: CreateNew must make the file, and an O_TRUNC open (file locking off) must truncate it: the ring.
        Assert.Equal(Mechanism.Ring, Router.RouteOpen(O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC));
        Assert.Equal(Mechanism.Ring, Router.RouteOpen(O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC));
        Assert.Equal(Mechanism.Ring, Router.RouteOpen(O_WRONLY | O_TRUNC | O_CLOEXEC));
        // Row 16.
        Assert.Equal(Mechanism.Ring, Router.RouteClose(mayWait: true));
        Assert.Equal(Mechanism.Inline, Router.RouteClose(mayWait: false));
    }
}
