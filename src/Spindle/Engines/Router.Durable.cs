using Spindle.Engines.FastPath;

namespace Spindle.Engines;

/// <summary>
/// The rows of the durability and batch requests (docs/engine-v2.md, rows 10–12), tried before the others for these kinds.
/// <code>
/// row  request            handle                                      mechanism
/// 10   data sync          any                                         Ring     IORING_OP_FSYNC with IORING_FSYNC_DATASYNC: concurrent syncs share a kernel worker pool, no pool thread waits
/// 11   durable write      O_NONBLOCK special file, epoll, O_DIRECT on memory-backed storage   Inline   as rows 1–3
///      durable write      buffered regular file                       Pool     io-wq runs one file's buffered writes one at a time: concurrent durable writers would wait for a flush each
///      durable write      anything else (O_DIRECT, block device, pipe) Ring    IORING_OP_WRITE with RWF_DSYNC (else a write linked to an fdatasync)
/// 12   read batch         each request as a read (rows 1–9)                    the ring's share goes in with one io_uring_enter
/// </code>
/// </summary>
internal static partial class Router
{
    internal static Mechanism RouteDurable(RequestKind kind, HandleFacts facts, long length, long fileOffset)
    {
        switch (kind)
        {
            case RequestKind.DataSync:
                return Mechanism.Ring;
            case RequestKind.WriteDurable:
                if (length == 0)
                {
                    return Mechanism.Done;
                }
                if (facts.NonBlocking && facts.MayBlockIndefinitely || facts.FailsAtOnce || facts.SynchronousBackend)
                {
                    return Mechanism.Inline;
                }
                return facts.BufferedFile ? Mechanism.Pool : Mechanism.Ring;
            default:
                return Route(RequestKind.Read, facts, length, fileOffset, useFastPath: true);
        }
    }
}
