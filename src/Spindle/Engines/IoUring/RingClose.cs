using Spindle.Interop;
using static Spindle.Interop.IoUringConstants;

namespace Spindle.Engines.IoUring;

/// <summary>
/// A <c>close(fd)</c> on the ring (<c>IORING_OP_CLOSE</c>) of a descriptor no one else holds any more, where the close
/// may wait (a network or FUSE file system writes back, the last close of a deleted file frees its blocks). Not
/// cancellable; its errors are ignored, as SafeFileHandle's own close ignores them.
/// </summary>
internal sealed unsafe class RingClose : RingOperation, IRingOperationKind<RingClose>
{
    private RingClose(IoUringEngine engine, int id)
        : base(engine, id)
    {
    }

    static RingClose IRingOperationKind<RingClose>.Create(IoUringEngine engine, int id) => new(engine, id);

    internal override bool WaitsInWorker => true;

    internal void Prepare(int fd) => Begin(handle: null, fd, offset: -1);

    internal override void FillSqe(IoUringSqe* sqe)
    {
        sqe->Fd = _fd;
        sqe->UserData = UserData;
        sqe->Offset = 0;
        sqe->Opcode = IORING_OP_CLOSE;
    }

    private protected override bool OnResult(int result)
    {
        Finish(result, null);
        return false;
    }

    internal override bool ReturnToPool() => _engine.Operations.Closes.Return(this);
}
