using Spindle.Engines.FastPath;

namespace Spindle.Engines;

/// <summary>
/// The rows of the durability and batch requests (docs/engine-v2.md, rows 11–13), tried for these kinds only.
/// <code>
/// row  request            handle                                      mechanism
/// 11   data sync          file on tmpfs/ramfs                         Inline   nothing to write back, as row 0
///      data sync          few requests on files in flight (row 9)     Pool     one hop, as row 9
///      data sync          others in flight                            Ring     IORING_OP_FSYNC(DATASYNC): concurrent syncs share kernel workers and flushes, no pool thread waits
/// 12   durable write      O_NONBLOCK special file, epoll, O_DIRECT on memory-backed storage   Inline   as rows 1–3
///      durable write      buffered regular file                       Pool     io-wq runs one file's buffered writes one at a time: concurrent durable writers would wait for a flush each
///      durable write      file or block device, few in flight (row 9), ≥ 256 KiB with nothing on the ring, or a file system refusing RWF_NOWAIT   Pool   one hop, as row 9
///      durable write      anything else                               Ring     IORING_OP_WRITE with RWF_DSYNC (else a write linked to an fdatasync)
/// 13   read batch         each request as a read (rows 1–10); a batch of two or more is "others in flight" for its own reads;
///                         the fast path's copies are shared with pool threads above a measured amount (FileIoEngine.Batch.cs)
/// </code>
/// </summary>
internal static partial class Router
{
    /// <param name="kind">A data sync, a durable write or a read of a batch.</param>
    /// <param name="facts">What is known about the request's handle.</param>
    /// <param name="length">Bytes the request transfers.</param>
    /// <param name="fileOffset">Where in the file; negative when the handle has no position.</param>
    /// <param name="ringInUse">Whether the ring holds any operation now (<see cref="FileRequestsInFlight.OnRing"/>).</param>
    /// <param name="othersInFlight">Whether more than a few requests on files or block devices are in flight (not <see cref="FileRequestsInFlight.Few"/>), or for a batch's read, whether the batch has others.</param>
    internal static Mechanism RouteDurable(RequestKind kind, HandleFacts facts, long length, long fileOffset, bool othersInFlight, bool ringInUse = false)
    {
        switch (kind)
        {
            case RequestKind.DataSync:
                if (facts.MemoryFileSystem)
                {
                    return Mechanism.Inline; // nothing to write back, as row 0
                }
                return othersInFlight || facts.MayBlockIndefinitely ? Mechanism.Ring : Mechanism.Pool;
            case RequestKind.WriteDurable:
                if (length == 0)
                {
                    return Mechanism.Done;
                }
                if (facts.NonBlocking && facts.MayBlockIndefinitely || facts.FailsAtOnce || facts.SynchronousBackend)
                {
                    return Mechanism.Inline;
                }
                return facts.BufferedFile || OnePoolHop(facts, length, othersInFlight, ringInUse) ? Mechanism.Pool : Mechanism.Ring;
            default:
                return Route(RequestKind.Read, facts, length, fileOffset, useFastPath: true, othersInFlight, IoEngine.IoUring, ringInUse);
        }
    }
}
