using System.Runtime.InteropServices;
using Spindle.Diagnostics;
using Spindle.Interop;
using static Spindle.Interop.IoUringConstants;

namespace Spindle.Engines.IoUring;

/// <summary>
/// The test seam's side of an operation (<see cref="SyscallSeam"/>, armed only by tests): consulted by
/// the ring thread only while the seam is enabled, never on the shipped path.
/// </summary>
internal sealed unsafe partial class IoUringOperation
{
    private IoVector* _cutVectors;                           // the shortened iovec list of a short-transfer SQE
    private int _cutCapacity;

    /// <summary>
    /// Asks the test seam (<see cref="SyscallSeam"/>, armed only by tests) what happens to the next
    /// SQE: an errno to answer with instead of submitting, or 0 (possibly with a short transfer).
    /// </summary>
    internal int DecideFault()
    {
        SyscallKind kind;
        switch (_kind)
        {
            case OperationKind.Read:
                kind = SyscallKind.Read;
                break;
            case OperationKind.Write:
                kind = SyscallKind.Write;
                break;
            case OperationKind.ReadVectors:
                kind = SyscallKind.ReadVector;
                break;
            case OperationKind.WriteVectors:
                kind = SyscallKind.WriteVector;
                break;
            case OperationKind.WriteDurable:
                return DecideDurableFault(); // IoUringOperation.Durable.cs
            default:
                return 0;
        }
        SyscallFault fault = SyscallSeam.Decide(_fd, kind);
        _shortenNext = fault == SyscallFault.ShortTransfer && SyscallSeam.Plausible(_offset);
        return SyscallSeam.ErrnoOf(fault);
    }

    private bool _shortenNext;                               // DecideFault asked for a short transfer on the next SQE

    /// <summary>Shortens the SQE <see cref="FillSqe"/> just filled when <see cref="DecideFault"/> asked for a short transfer.</summary>
    internal void ApplyFault(IoUringSqe* sqe)
    {
        if (!_shortenNext)
        {
            return;
        }
        _shortenNext = false;
        if (sqe->Opcode is IORING_OP_READ or IORING_OP_WRITE)
        {
            sqe->Length = (uint)SyscallSeam.Shorten(sqe->Length);
            return;
        }
        // READV/WRITEV: the kernel gets half the bytes; completion logic still measures against the whole chunk.
        int chunk = (int)sqe->Length;
        if (_cutCapacity < chunk)
        {
            _cutVectors = (IoVector*)NativeMemory.Realloc(_cutVectors, (nuint)chunk * (nuint)sizeof(IoVector));
            _cutCapacity = chunk;
        }
        sqe->Length = (uint)SyscallSeam.CutVectors((IoVector*)sqe->Address, chunk, _cutVectors);
        sqe->Address = (ulong)_cutVectors;
    }
}
