using System.Runtime.InteropServices;
using Spindle.Interop;
using static Spindle.Interop.IoUringConstants;

namespace Spindle.Engines.IoUring;

/// <summary>
/// Runs a read or write SQE as the system call it stands for (<c>preadv2</c>, <c>pwritev2</c>) on the calling thread,
/// and answers as its CQE would: bytes transferred, or <c>-errno</c>. The file position rules are the kernel's for
/// both: an offset of -1 reads or writes at the current position and moves it.
/// </summary>
internal static unsafe class SqeSystemCall
{
    /// <summary>The CQE result of <paramref name="sqe"/>, run here.</summary>
    internal static int Run(IoUringSqe* sqe)
    {
        IoVector single = new() { Base = (byte*)sqe->Address, Count = sqe->Length };
        bool vectored = sqe->Opcode is IORING_OP_READV or IORING_OP_WRITEV;
        IoVector* vectors = vectored ? (IoVector*)sqe->Address : &single;
        int count = vectored ? (int)sqe->Length : 1;
        long offset = (long)sqe->Offset; // ulong.MaxValue is -1: the current position
        int flags = (int)sqe->OpFlags;
        nint result = sqe->Opcode is IORING_OP_READ or IORING_OP_READV
            ? Libc.PReadV2(sqe->Fd, vectors, count, offset, flags)
            : Libc.PWriteV2(sqe->Fd, vectors, count, offset, flags);
        return result >= 0 ? (int)result : -Marshal.GetLastPInvokeError();
    }
}
