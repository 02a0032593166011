using Spindle.Engines.FastPath;
using Spindle.Interop;

namespace Spindle.Engines;

/// <summary>What a request asks for. Adding one (a batch of reads, a durable write, an open) is one value here and one row in <see cref="Router"/>.</summary>
internal enum RequestKind : byte
{
    /// <summary>A read into one buffer.</summary>
    Read,

    /// <summary>A write from one buffer.</summary>
    Write,

    /// <summary>A read into several buffers at one offset.</summary>
    ReadScatter,

    /// <summary>A write from several buffers at one offset.</summary>
    WriteGather,

    /// <summary><c>fsync</c>: data and metadata to the device.</summary>
    Flush,

    /// <summary><c>fdatasync</c>: the data, and the metadata needed to read it back, to the device.</summary>
    DataSync,

    /// <summary>A write that completes only when its bytes are on the device (<c>RWF_DSYNC</c>, or the write and a linked <c>fdatasync</c>).</summary>
    WriteDurable,

    /// <summary>Many reads awaited as one; each is routed as a <see cref="Read"/>, and those for the ring reach it together.</summary>
    ReadBatch,

    /// <summary>A path opened with every rule of the synchronous open (FileOpener).</summary>
    Open,

    /// <summary>A descriptor closed as SafeFileHandle's release closes it.</summary>
    Close,
}

/// <summary>Where a request runs: the mechanisms the engines execute.</summary>
internal enum Mechanism : byte
{
    /// <summary>Nothing to do: the request completes at once with nothing transferred.</summary>
    Done,

    /// <summary>The blocking system call on the caller's thread, which returns at once (or after a copy).</summary>
    Inline,

    /// <summary>A copy into the page cache on the caller's thread (a small buffered write to a local file system).</summary>
    FastPath,

    /// <summary>A blocking system call on a thread-pool thread.</summary>
    Pool,

    /// <summary>
    /// For handles that may wait for ever (pipes, sockets, devices): the descriptor's readiness awaited in
    /// one poll(2) thread, then the system call on a thread of Spindle's own, never a pool thread.
    /// </summary>
    Blocking,

    /// <summary>An SQE on the io_uring; the continuation runs on the thread pool.</summary>
    Ring,

    /// <summary>An SQE on the calling thread's own ring, handed to the kernel with the rest of a synchronous batch and waited for on that thread.</summary>
    OwnRing,
}

/// <summary>
/// Decides where every request runs, for every engine, from what it asks, what is known about its handle
/// (<see cref="HandleFacts"/>, learned once per handle) and how many requests are in flight. The engines
/// only execute what it chose. The rows of an engine's table are tried in order; the first that matches
/// decides. The page-cache read fast path (<see cref="ReadFastPath"/>) has had its chance before a read
/// gets here. Why each row exists, with the measurement behind it, is in docs/engine-v2.md.
/// <code>
/// io_uring (Auto where the kernel allows it)
/// row  request            handle                                      mechanism
///  0   flush              file on tmpfs/ramfs                         Inline   nothing to write back: fsync returns at once, a ring round trip would cost two hops and a worker
///      flush              any other                                   Ring
///  1   any                O_NONBLOCK pipe, socket, device, anon inode Inline   fails with EAGAIN at once, as System.IO (io_uring would wait)
///  2   any                epoll descriptor                            Inline   fails with EINVAL at once, as System.IO (io_uring never completes)
///  3   read, write, s/g   file on tmpfs/ramfs, O_DIRECT on zram/brd/pmem: ≤ 64 KiB Inline the kernel copies synchronously; io_uring punts each to io-wq;
///                                                          larger       Pool   a copy longer than a hop: concurrent requests from one thread use every core
///  4   read (0 bytes)     any                                         Inline   returns at once; io_uring would wait on an empty pipe
///  5   read, scatter      character device                            Blocking a device's non-blocking read may come back short on the ring
///  6   write, gather (0)  any                                         Done     System.IO makes no system call either
///  7   write, gather      cached regular file, ≤ 64 KiB, has offset   FastPath a copy into the page cache (WriteFastPath)
///  8   write, gather      other buffered regular file, has offset     Pool     io-wq would run one file's writes one at a time
///  9   read, write, s/g   file or block device, few in flight: none,  Pool    one request alone: one hop (System.IO's shape) beats the ring's two; two
///                         or one on a pool thread while the ring is            at a time need no more pool threads than the pool keeps (FileRequestsInFlight.Few);
///                         empty and no crowd came in the last 100 ms
///                         or a file system that refuses RWF_NOWAIT (FUSE)       io_uring punts each of its requests to io-wq, several times slower
///  9b  read, write, s/g   file or block device, ≥ 256 KiB, while the  Pool    the device's bandwidth, not its depth, bounds large transfers: a pool thread
///                         ring holds nothing                                   waits in the call, where each sparse ring completion wakes a pool thread that spins;
///                                                                              with requests on the ring, their continuations would wait for the pool thread
/// 10   anything else                                                  Ring
/// 11–13 data sync, durable write, read batch: RouteDurable (Router.Durable.cs)
/// 14–16 open; close (ring only where it may wait): RouteOpen, RouteClose (below)
/// 17   member of a synchronous read batch: RouteSynchronousBatchMember (below)
///
/// thread pool (Auto without io_uring, and a synchronous stream's *Async calls)
///  1   read, write, s/g   file on tmpfs/ramfs, O_DIRECT on zram/brd/pmem, ≤ 64 KiB  Inline as row 3 above
///  2   write, gather      cached regular file, ≤ 64 KiB, has offset   FastPath as row 7 above
///  3   read, write, s/g   pipe, socket, device, anon inode            Blocking never holds a pool thread that another request needs
///  4   anything else                                                  Pool     System.IO's mechanism
///
/// synchronous
///  1   read, write, s/g   pipe, socket, device, anon inode (bytes)    Blocking the caller's next write may be what the read waits for
///  2   anything else                                                  Inline
/// </code>
/// </summary>
internal static partial class Router
{
    /// <param name="kind">What the request asks for.</param>
    /// <param name="facts">What is known about the request's handle.</param>
    /// <param name="length">Bytes the request transfers.</param>
    /// <param name="fileOffset">Where in the file; negative when the handle has no position.</param>
    /// <param name="useFastPath">Whether the caller allows the page-cache paths (false when one already failed).</param>
    /// <param name="othersInFlight">Whether more than a few requests on files or block devices are in flight (not <see cref="FileRequestsInFlight.Few"/>).</param>
    /// <param name="engine">The engine that executes: <see cref="IoEngine.IoUring"/>, <see cref="IoEngine.ThreadPool"/> or <see cref="IoEngine.Sync"/>.</param>
    /// <param name="ringInUse">Whether the ring holds any operation now (<see cref="FileRequestsInFlight.OnRing"/>).</param>
    internal static Mechanism Route(RequestKind kind, HandleFacts facts, long length, long fileOffset, bool useFastPath, bool othersInFlight, IoEngine engine,
        bool ringInUse = false)
        => engine switch
        {
            IoEngine.Sync => RouteSync(kind, facts, length),
            IoEngine.ThreadPool => RouteThreadPool(kind, facts, length, fileOffset, useFastPath),
            _ => RouteRing(kind, facts, length, fileOffset, useFastPath, othersInFlight, ringInUse),
        };

    private static Mechanism RouteSync(RequestKind kind, HandleFacts facts, long length)
        => kind != RequestKind.Flush && length > 0 && facts.MayBlockIndefinitely ? Mechanism.Blocking : Mechanism.Inline;

    private static Mechanism RouteThreadPool(RequestKind kind, HandleFacts facts, long length, long fileOffset, bool useFastPath)
    {
        if (kind != RequestKind.Flush && IsInlineCopy(facts, length))
        {
            return Mechanism.Inline;
        }
        if (kind is RequestKind.Write or RequestKind.WriteGather && useFastPath && IsPageCacheCopy(facts, length, fileOffset))
        {
            return Mechanism.FastPath;
        }
        return kind != RequestKind.Flush && facts.MayBlockIndefinitely ? Mechanism.Blocking : Mechanism.Pool;
    }

    /// <summary>The largest request on memory-backed storage copied on the caller's thread (row 3); a larger copy costs more than a pool thread's hop.</summary>
    internal const long MaxInlineCopy = 64 * 1024;

    // Row 3: a request on memory-backed storage small enough that the copy costs less than a hop to another thread.
    private static bool IsInlineCopy(HandleFacts facts, long length) => facts.SynchronousBackend && length > 0 && length <= MaxInlineCopy;

    // A small buffered write at an offset to a local file system: a copy into the page cache.
    private static bool IsPageCacheCopy(HandleFacts facts, long length, long fileOffset)
        => WriteFastPath.Enabled && fileOffset >= 0 && length <= WriteFastPath.MaxInlineBytes && facts.CachedWrites;

    private static Mechanism RouteRing(RequestKind kind, HandleFacts facts, long length, long fileOffset, bool useFastPath, bool othersInFlight, bool ringInUse)
    {
        if (kind == RequestKind.Flush)
        {
            return facts.MemoryFileSystem ? Mechanism.Inline : Mechanism.Ring;
        }
        if (facts.NonBlocking && facts.MayBlockIndefinitely || facts.FailsAtOnce || IsInlineCopy(facts, length))
        {
            return Mechanism.Inline;
        }
        if (facts.SynchronousBackend && length > 0)
        {
            return Mechanism.Pool; // a larger copy: where System.IO runs it, so that requests one thread starts use every core
        }
        switch (kind)
        {
            case RequestKind.Read:
            case RequestKind.ReadScatter:
                if (length == 0)
                {
                    return Mechanism.Inline;
                }
                if (facts.CharacterDevice)
                {
                    return Mechanism.Blocking;
                }
                return OnePoolHop(facts, length, othersInFlight, ringInUse) ? Mechanism.Pool : Mechanism.Ring;
            default:
                if (length == 0)
                {
                    return Mechanism.Done;
                }
                if (useFastPath && fileOffset >= 0)
                {
                    if (IsPageCacheCopy(facts, length, fileOffset))
                    {
                        return Mechanism.FastPath;
                    }
                    if (facts.BufferedFile)
                    {
                        return Mechanism.Pool;
                    }
                }
                return OnePoolHop(facts, length, othersInFlight, ringInUse) ? Mechanism.Pool : Mechanism.Ring;
        }
    }

    /// <summary>The smallest transfer on a file or block device that runs on a pool thread however many are in flight (row 9b).</summary>
    internal const long MinPoolTransfer = 256 * 1024;

    // Row 9: a request on a file or block device with few in flight, or on a file system io_uring can only serve through its
    // workers, or large enough that the device's bandwidth bounds it while nothing is on the ring (9b: a pool thread
    // waiting in a large transfer would hold back the continuations of the ring's completions), runs on a pool thread
    // (one hop, System.IO's mechanism) instead of the ring.
    private static bool OnePoolHop(HandleFacts facts, long length, bool othersInFlight, bool ringInUse)
        => !facts.MayBlockIndefinitely && (!othersInFlight || facts.RefusesNonBlockingIo || (length >= MinPoolTransfer && !ringInUse));

    /// <summary>
    /// Where an open runs on the io_uring engine (rows 14 and 15 of the table in docs/engine-v2.md).
    /// <code>
    /// row  request                         mechanism
    ///  14  open without O_TRUNC or O_EXCL  FastPath openat2(RESOLVE_CACHED) on the caller's thread, O_CREAT left out (an existing file opens the same);
    ///                                               for O_CREAT, a file not in the cache whose directory is: created there with O_EXCL (System.IO's way);
    ///                                               EAGAIN (the lookup needs the disk), a file that appeared meanwhile or a FIFO without a reader go to the ring
    ///  15  any other open                  Ring     creating or truncating opens always wait in an io-wq worker; the lookup may read directories
    /// </code>
    /// </summary>
    internal static Mechanism RouteOpen(int flags)
        => OpenFastPath.Enabled && (flags & (OpenFlags.O_TRUNC | OpenFlags.O_EXCL)) == 0 ? Mechanism.FastPath : Mechanism.Ring;

    /// <summary>
    /// Where a close runs on the io_uring engine (row 16): on the ring when it may wait (a network or FUSE file system
    /// writes back or asks its server; the last close of a deleted file frees its blocks) and Spindle alone holds the
    /// handle (else SafeFileHandle's own Dispose, whose last user's release closes it); inline where it cannot wait
    /// (a local file system): close(2) there costs less than a ring round trip.
    /// </summary>
    internal static Mechanism RouteClose(bool mayWait) => mayWait ? Mechanism.Ring : Mechanism.Inline;

    /// <summary>
    /// Where a member of a synchronous read batch runs when io_uring is the engine (row 17), after the page cache had its
    /// chance: on the calling thread's own ring, handed to the kernel with the batch's other such reads and waited for
    /// at once, when the file or block device is one io_uring reads without its workers — so that a thread blocked on
    /// a batch keeps all of it in the device's queue, as fio does; anything else with a plain read on the caller's
    /// thread, one after the other (memory-backed storage copies at once; io_uring would hand FUSE's and character
    /// devices' reads to its workers; a pipe may wait for ever).
    /// </summary>
    internal static Mechanism RouteSynchronousBatchMember(HandleFacts facts, long length)
        => length > 0 && !facts.SynchronousBackend && !facts.MayBlockIndefinitely && !facts.CharacterDevice && !facts.FailsAtOnce
            && !facts.RefusesNonBlockingIo
            ? Mechanism.OwnRing
            : Mechanism.Inline;

    /// <summary>The bytes a scatter request asks for.</summary>
    internal static long TotalLength(IReadOnlyList<Memory<byte>> buffers)
    {
        long total = 0;
        for (int i = 0; i < buffers.Count; i++)
        {
            total += buffers[i].Length;
        }
        return total;
    }

    /// <summary>The bytes a gather request asks for.</summary>
    internal static long TotalLength(IReadOnlyList<ReadOnlyMemory<byte>> buffers)
    {
        long total = 0;
        for (int i = 0; i < buffers.Count; i++)
        {
            total += buffers[i].Length;
        }
        return total;
    }
}
