using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Interop;
using static Spindle.Interop.IoUringConstants;

namespace Spindle.Engines.IoUring;

/// <summary>
/// <c>fsync</c> or <c>fdatasync</c> on the ring (<c>IORING_OP_FSYNC</c>, with <c>IORING_FSYNC_DATASYNC</c> for the
/// latter): the kernel runs it in an io-wq worker, so no thread of ours waits for the device. Special files that cannot
/// be synchronised succeed, as in System.IO.
/// </summary>
internal sealed unsafe class RingSync : RingOperation, IRingOperationKind<RingSync>, IRingFileRequest
{
    private const uint IORING_FSYNC_DATASYNC = 1;  // fsync_flags: fdatasync rather than fsync

    private bool _dataOnly; // fdatasync rather than fsync

    private RingSync(IoUringEngine engine, int id)
        : base(engine, id)
    {
    }

    static RingSync IRingOperationKind<RingSync>.Create(IoUringEngine engine, int id) => new(engine, id);

    internal override bool WaitsInWorker => true;

    /// <summary>An <c>fsync</c>, or for a <see cref="RequestKind.DataSync"/> an <c>fdatasync</c>, of the request's handle.</summary>
    public void Prepare(in FileRequest request)
    {
        Begin(request.Handle, fd: -1, offset: -1);
        _dataOnly = request.Kind == RequestKind.DataSync;
    }

    internal override void FillSqe(IoUringSqe* sqe)
    {
        sqe->Fd = _fd;
        sqe->UserData = UserData;
        FillSync(sqe, _dataOnly);
        if (_dataOnly)
        {
            EngineProbe.Current?.DurableSqe(_engine.Thread, DurableSqeKind.DataSync);
        }
    }

    /// <summary>Fills an <c>IORING_OP_FSYNC</c> (of the data only with <paramref name="dataOnly"/>); the caller sets the descriptor and the user data.</summary>
    internal static void FillSync(IoUringSqe* sqe, bool dataOnly)
    {
        sqe->Opcode = IORING_OP_FSYNC;
        sqe->Offset = 0;
        sqe->Length = 0;
        sqe->Address = 0;
        sqe->OpFlags = dataOnly ? IORING_FSYNC_DATASYNC : 0;
    }

    private protected override bool OnResult(int result) => OnSyncResult(result);

    internal override bool ReturnToPool() => _engine.Operations.Syncs.Return(this);
}
