using Spindle.Engines.FastPath;

namespace Spindle.Engines;

/// <summary>What a request asks for. Adding one (a batch of reads, a durable write, an open) is one value here and one row in <see cref="Router"/>.</summary>
internal enum RequestKind : byte
{
    Read,
    Write,
    ReadScatter,
    WriteGather,
    Flush,
    Open,  // a path, opened with every rule of the synchronous open (FileOpener)
    Close, // a descriptor, closed as SafeFileHandle's release closes it
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

    /// <summary>A blocking system call on a thread-pool thread (or, for handles that may wait for ever, a thread of its own).</summary>
    Pool,

    /// <summary>An SQE on the io_uring; the continuation runs on the thread pool.</summary>
    Ring,
}

/// <summary>
/// Decides where an io_uring-engine request runs, from what it asks and what is known about its handle
/// (<see cref="HandleFacts"/>, learned once per handle). The rows are tried in order; the first that
/// matches decides. The page-cache read fast path (<see cref="ReadFastPath"/>) has had its chance before
/// a read gets here. Why each row exists, with the measurement behind it, is in docs/engine-v2.md.
/// <code>
/// row  request            handle                                      mechanism
///  1   any                O_NONBLOCK pipe, socket, device, anon inode Inline   fails with EAGAIN at once, as System.IO (io_uring would wait)
///  2   any                epoll descriptor                            Inline   fails with EINVAL at once, as System.IO (io_uring never completes)
///  3   read, write, s/g   O_DIRECT on tmpfs/ramfs, zram/brd/pmem      Inline   the kernel copies synchronously; io_uring punts each to io-wq
///  4   read (0 bytes)     any                                         Inline   returns at once; io_uring would wait on an empty pipe
///  5   read, scatter      character device                            Pool     a device's non-blocking read may come back short on the ring
///  6   write, gather (0)  any                                         Done     System.IO makes no system call either
///  7   write, gather      cached regular file, ≤ 64 KiB, has offset   FastPath a copy into the page cache (WriteFastPath)
///  8   write, gather      other buffered regular file, has offset     Pool     io-wq would run one file's writes one at a time
///  9   anything else                                                  Ring
/// </code>
/// </summary>
internal static class Router
{
    internal static Mechanism Route(RequestKind kind, HandleFacts facts, long length, long fileOffset, bool useFastPath)
    {
        if (kind == RequestKind.Flush)
        {
            return Mechanism.Ring;
        }
        if (facts.NonBlocking && facts.MayBlockIndefinitely || facts.FailsAtOnce || facts.SynchronousBackend)
        {
            return Mechanism.Inline;
        }
        switch (kind)
        {
            case RequestKind.Read:
            case RequestKind.ReadScatter:
                if (length == 0)
                {
                    return Mechanism.Inline;
                }
                return facts.CharacterDevice ? Mechanism.Pool : Mechanism.Ring;
            default:
                if (length == 0)
                {
                    return Mechanism.Done;
                }
                if (useFastPath && fileOffset >= 0)
                {
                    if (WriteFastPath.Enabled && length <= WriteFastPath.MaxInlineBytes && facts.CachedWrites)
                    {
                        return Mechanism.FastPath;
                    }
                    if (facts.BufferedFile)
                    {
                        return Mechanism.Pool;
                    }
                }
                return Mechanism.Ring;
        }
    }

    /// <summary>
    /// Where an open runs on the io_uring engine (rows 10 and 11 of the table in docs/engine-v2.md).
    /// <code>
    /// row  request                         mechanism
    ///  10  open, neither O_CREAT nor O_TRUNC FastPath openat2(RESOLVE_CACHED) on the caller's thread; EAGAIN (the lookup needs the disk) goes to the ring
    ///  11  any other open                  Ring     creating or truncating opens always wait in an io-wq worker; the lookup may read directories
    /// </code>
    /// </summary>
    internal static Mechanism RouteOpen(int flags) => OpenFastPath.Applies(flags) ? Mechanism.FastPath : Mechanism.Ring;

    /// <summary>
    /// Where a close runs on the io_uring engine (row 12): on the ring when Spindle alone holds the handle (the last
    /// close may write back on network file systems, or free a deleted file's blocks); otherwise SafeFileHandle's own
    /// Dispose, whose last user's release closes it.
    /// </summary>
    internal static Mechanism RouteClose(bool exclusive) => exclusive ? Mechanism.Ring : Mechanism.Inline;

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
