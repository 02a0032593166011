using Spindle.Engines.FastPath;
using Spindle.Interop;

namespace Spindle.Engines;

/// <summary>What a request asks for; each new one is one value here and one row in <see cref="Router"/>.</summary>
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

    /// <summary>For handles that may wait for ever: readiness awaited in one poll(2) thread, then the call on a thread of Spindle's own.</summary>
    Blocking,

    /// <summary>An SQE on the io_uring; the continuation runs on the thread pool.</summary>
    Ring,

    /// <summary>An SQE on the calling thread's own ring, handed to the kernel with the rest of a synchronous batch and waited for on that thread.</summary>
    OwnRing,
}

/// <summary>
/// Decides where every request runs, for every engine, from what it asks and its handle's <see cref="HandleFacts"/>;
/// the engines only execute. An engine's rows are tried in order, the first match decides; the read fast path
/// (<see cref="ReadFastPath"/>) has had its chance before. Why each row exists is in docs/engine-v2.md, whose decision
/// table RouterDocsTests checks against the io_uring table here (each row's number and mechanism).
/// <code>
/// io_uring (Auto where the kernel allows it)
/// row  mechanism  request            handle
///  0   Inline     flush              file on tmpfs/ramfs: nothing to write back, fsync returns at once
///  0   Ring       flush              any other
///  1   Inline     any                O_NONBLOCK pipe, socket, device, anon inode: fails with EAGAIN at once, as System.IO (io_uring would wait)
///  2   Inline     any                epoll descriptor: fails with EINVAL at once, as System.IO (io_uring never completes)
///  3   Inline     read, write, s/g   file on tmpfs/ramfs, O_DIRECT on zram/brd/pmem, ≤ 64 KiB: the kernel copies synchronously, io_uring punts each to io-wq
///  3   Pool       read, write, s/g   the same, larger: a copy longer than a hop; concurrent requests from one thread use every core
///  4   Inline     read (0 bytes)     any: returns at once; io_uring would wait on an empty pipe
///  5   Blocking   read, scatter      character device: a device's non-blocking read may come back short on the ring
///  6   Done       write, gather (0)  any: System.IO makes no system call either
///  7   FastPath   write, gather      cached regular file, ≤ 64 KiB, has offset: a copy into the page cache (WriteFastPath)
///  8   Pool       write, gather      other buffered regular file, has offset: io-wq would run one file's writes one at a time
///  9   Pool       read, write, s/g   file on a file system that refuses RWF_NOWAIT (FUSE, overlayfs): io_uring punts each request to io-wq
/// 10   Ring       anything else
/// 11   Inline     data sync          file on tmpfs/ramfs: as row 0
/// 11   Pool       data sync          file or block device, no other file request in flight (FileRequestsInFlight.None): one hop
/// 11   Ring       data sync          others in flight: IORING_OP_FSYNC(DATASYNC), concurrent syncs share kernel workers and flushes
/// 12   Done       durable write      0 bytes
/// 12   Inline     durable write      O_NONBLOCK special file, epoll, memory-backed storage: as rows 1–3
/// 12   Pool       durable write      buffered regular file (io-wq runs one file's buffered writes one at a time); O_DIRECT file
///                                    or block device with no other file request in flight; a file system refusing RWF_NOWAIT
/// 12   Ring       durable write      anything else: IORING_OP_WRITE with RWF_DSYNC (else a write linked to an fdatasync)
/// 13   Ring       read batch         each member as a read (rows 1–10); the fast path's copies are shared with pool threads above
///                                    a measured amount (FileIoEngine.Batch.cs)
/// 14   FastPath   open               without O_TRUNC or O_EXCL: openat2(RESOLVE_CACHED) on the caller's thread (RouteOpen)
/// 15   Ring       open               any other: creating or truncating opens always wait in an io-wq worker
/// 16   Ring       close              may wait (network or FUSE file system, DeleteOnClose) and Spindle alone holds the handle
/// 16   Inline     close              any other (a local file system: close(2) costs less than a ring round trip)
/// 17   OwnRing    read (sync batch)  file or block device io_uring reads without its workers (RouteSynchronousBatchMember)
/// 17   Inline     read (sync batch)  anything else
///
/// thread pool (Auto without io_uring, and a synchronous stream's *Async calls)
///  1   Inline     read, write, s/g,  as row 3 above
///                 durable write
///  2   FastPath   write, gather      as row 7 above
///  3   Blocking   all but a flush    pipe, socket, device, anon inode: never holds a pool thread that another request needs
///  4   Pool       anything else: System.IO's mechanism
///
/// synchronous
///  1   Blocking   transfers (bytes)  pipe, socket, device, anon inode: the caller's next write may be what the read waits for
///  2   Inline     anything else
/// </code>
/// </summary>
internal static class Router
{
    /// <summary>Where <paramref name="request"/> runs on <paramref name="engine"/>: the table below, for the request's kind, handle and size.</summary>
    internal static Mechanism Route(in FileRequest request, IoEngine engine)
        => engine == IoEngine.IoUring && request.Kind is RequestKind.DataSync or RequestKind.WriteDurable
            ? RouteDurable(request.Kind, request.Facts, request.Length, request.Offset, !FileRequestsInFlight.None)
            : Route(request.Kind, request.Facts, request.Length, request.Offset, request.UseFastPath, engine);

    /// <summary>
    /// The same from the request's parts (as <see cref="FileRequest"/>'s); <paramref name="useFastPath"/> is false when
    /// the caller opts out of the page-cache paths or one already failed.
    /// </summary>
    internal static Mechanism Route(RequestKind kind, HandleFacts facts, long length, long fileOffset, bool useFastPath, IoEngine engine)
        => engine switch
        {
            IoEngine.Sync => RouteSync(kind, facts, length),
            IoEngine.ThreadPool => RouteThreadPool(kind, facts, length, fileOffset, useFastPath),
            _ => RouteRing(kind, facts, length, fileOffset, useFastPath),
        };

    private static Mechanism RouteSync(RequestKind kind, HandleFacts facts, long length)
        => kind != RequestKind.Flush && length > 0 && facts.MayBlockIndefinitely ? Mechanism.Blocking : Mechanism.Inline;

    private static Mechanism RouteThreadPool(RequestKind kind, HandleFacts facts, long length, long fileOffset, bool useFastPath)
        => kind switch
        {
            not RequestKind.Flush when IsInlineCopy(facts, length) => Mechanism.Inline,
            RequestKind.Write or RequestKind.WriteGather when useFastPath && IsPageCacheCopy(facts, length, fileOffset)
                => Mechanism.FastPath,
            not RequestKind.Flush when facts.MayBlockIndefinitely => Mechanism.Blocking,
            _ => Mechanism.Pool,
        };

    // Row 3: a request on memory-backed storage small enough that the copy costs less than a hop to another thread.
    private static bool IsInlineCopy(HandleFacts facts, long length) => facts.SynchronousBackend && length > 0 && length <= EngineTunables.MaxInlineCopy;

    // A small buffered write at an offset to a local file system: a copy into the page cache.
    private static bool IsPageCacheCopy(HandleFacts facts, long length, long fileOffset)
        => WriteFastPath.Enabled && fileOffset >= 0 && length <= WriteFastPath.MaxInlineBytes && facts.CachedWrites;

    private static Mechanism RouteRing(RequestKind kind, HandleFacts facts, long length, long fileOffset, bool useFastPath)
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
        bool read = kind is RequestKind.Read or RequestKind.ReadScatter;
        if (length == 0)
        {
            return read ? Mechanism.Inline : Mechanism.Done; // rows 4 and 6
        }
        if (read && facts.CharacterDevice)
        {
            return Mechanism.Blocking;
        }
        bool writeAtOffset = !read && useFastPath && fileOffset >= 0;
        if (writeAtOffset && IsPageCacheCopy(facts, length, fileOffset))
        {
            return Mechanism.FastPath; // row 7
        }
        if (writeAtOffset && facts.BufferedFile)
        {
            return Mechanism.Pool; // row 8
        }
        return RefusesNowait(facts) ? Mechanism.Pool : Mechanism.Ring; // rows 9 and 10
    }

    // Row 9: a file system without non-blocking reads lacks the flag (FMODE_NOWAIT) io_uring looks for before it tries a
    // request inline, so each of its requests would wait in an io-wq worker: a pool thread's call is System.IO's one hop.
    private static bool RefusesNowait(HandleFacts facts) => !facts.MayBlockIndefinitely && facts.RefusesNonBlockingIo;

    // Rows 11 and 12: a sync or durable write alone waits in an io-wq worker on the ring, and its completion then wakes a
    // thread; on a pool thread it is one hop. A waiter that asks for its result first runs the call.
    private static bool OnePoolHop(HandleFacts facts, bool othersInFlight)
        => !facts.MayBlockIndefinitely && (facts.RefusesNonBlockingIo || !othersInFlight);

    /// <summary>
    /// Where a data sync, a durable write or a read of a batch runs on the io_uring engine (rows 11–13);
    /// <paramref name="othersInFlight"/>: another request on a file or block device is in flight (not <see cref="FileRequestsInFlight.None"/>).
    /// </summary>
    internal static Mechanism RouteDurable(RequestKind kind, HandleFacts facts, long length, long fileOffset, bool othersInFlight)
        => kind switch
        {
            RequestKind.DataSync when facts.MemoryFileSystem => Mechanism.Inline, // nothing to write back, as row 0
            RequestKind.DataSync => othersInFlight || facts.MayBlockIndefinitely ? Mechanism.Ring : Mechanism.Pool,
            RequestKind.WriteDurable when length == 0 => Mechanism.Done,
            RequestKind.WriteDurable when facts.NonBlocking && facts.MayBlockIndefinitely || facts.FailsAtOnce
                || facts.SynchronousBackend => Mechanism.Inline,
            RequestKind.WriteDurable => facts.BufferedFile || OnePoolHop(facts, othersInFlight) ? Mechanism.Pool : Mechanism.Ring,
            _ => Route(RequestKind.Read, facts, length, fileOffset, useFastPath: true, IoEngine.IoUring),
        };

    /// <summary>
    /// Where an open runs on the io_uring engine (rows 14 and 15). Row 14 leaves <c>O_CREAT</c> out (an existing file opens
    /// the same), and creates a missing file whose directory is cached with <c>O_EXCL</c> (System.IO's way); EAGAIN (the
    /// lookup needs the disk), a file that appeared meanwhile or a FIFO without a reader go to the ring.
    /// </summary>
    internal static Mechanism RouteOpen(int flags)
        => OpenFastPath.Enabled && (flags & (OpenFlags.O_TRUNC | OpenFlags.O_EXCL)) == 0 ? Mechanism.FastPath : Mechanism.Ring;

    /// <summary>Where a close runs on the io_uring engine (row 16); a handle Spindle does not alone hold closes in its own Dispose.</summary>
    internal static Mechanism RouteClose(bool mayWait) => mayWait ? Mechanism.Ring : Mechanism.Inline;

    /// <summary>
    /// Where a member of a synchronous read batch runs on io_uring (row 17), after the page cache: the own ring's reads
    /// reach the device's queue together, as fio's do; the rest are read one by one on the caller's thread (memory copies
    /// at once; io_uring would hand FUSE's and character devices' reads to its workers; a pipe may wait).
    /// </summary>
    internal static Mechanism RouteSynchronousBatchMember(HandleFacts facts, long length)
        => length > 0 && !facts.SynchronousBackend && !facts.MayBlockIndefinitely && !facts.CharacterDevice && !facts.FailsAtOnce
            && !facts.RefusesNonBlockingIo
            ? Mechanism.OwnRing
            : Mechanism.Inline;
}
