using System.Runtime.InteropServices;

namespace Spindle.Interop;

/// <summary>Constants of the io_uring ABI (include/uapi/linux/io_uring.h); the same on every architecture.</summary>
internal static class IoUringConstants
{
    // io_uring_params.flags
    internal const uint IORING_SETUP_CQSIZE = 1u << 3;        // the CQ ring size comes from params.cq_entries (5.5)
    internal const uint IORING_SETUP_SUBMIT_ALL = 1u << 7;    // keep submitting the batch after a failed SQE (5.18)

    // io_uring_params.features
    internal const uint IORING_FEAT_SINGLE_MMAP = 1u << 0;
    internal const uint IORING_FEAT_NODROP = 1u << 1;
    internal const uint IORING_FEAT_RW_CUR_POS = 1u << 3;     // offset -1 means "current position" (5.6)
    internal const uint IORING_FEAT_EXT_ARG = 1u << 8;        // io_uring_enter takes a timeout (IORING_ENTER_EXT_ARG) (5.11)

    // io_uring_enter flags
    internal const uint IORING_ENTER_GETEVENTS = 1u << 0;
    internal const uint IORING_ENTER_EXT_ARG = 1u << 3;

    // io_uring_register opcodes
    internal const uint IORING_REGISTER_IOWQ_MAX_WORKERS = 19; // the calling task's io-wq limits: [bound, unbound], 0 = unchanged (5.15)

    // sq_ring flags
    internal const uint IORING_SQ_CQ_OVERFLOW = 1u << 1;

    // mmap offsets
    internal const long IORING_OFF_SQ_RING = 0;
    internal const long IORING_OFF_CQ_RING = 0x8000000;
    internal const long IORING_OFF_SQES = 0x10000000;

    // opcodes
    internal const byte IORING_OP_READV = 1;
    internal const byte IORING_OP_WRITEV = 2;
    internal const byte IORING_OP_FSYNC = 3;
    internal const byte IORING_OP_ASYNC_CANCEL = 14;
    internal const byte IORING_OP_OPENAT = 18;
    internal const byte IORING_OP_CLOSE = 19;
    internal const byte IORING_OP_READ = 22;
    internal const byte IORING_OP_WRITE = 23;

    internal const int PROT_READ = 0x1;
    internal const int PROT_WRITE = 0x2;
    internal const int MAP_SHARED = 0x01;
    internal const int MAP_POPULATE = 0x8000;

    internal const int EFD_CLOEXEC = 0x80000;
}

/// <summary><c>struct io_sqring_offsets</c>.</summary>
[StructLayout(LayoutKind.Sequential)]
internal struct IoSqRingOffsets
{
    public uint Head;
    public uint Tail;
    public uint RingMask;
    public uint RingEntries;
    public uint Flags;
    public uint Dropped;
    public uint Array;
    public uint Resv1;
    public ulong UserAddr;
}

/// <summary><c>struct io_cqring_offsets</c>.</summary>
[StructLayout(LayoutKind.Sequential)]
internal struct IoCqRingOffsets
{
    public uint Head;
    public uint Tail;
    public uint RingMask;
    public uint RingEntries;
    public uint Overflow;
    public uint Cqes;
    public uint Flags;
    public uint Resv1;
    public ulong UserAddr;
}

/// <summary><c>struct io_uring_params</c> (120 bytes).</summary>
[StructLayout(LayoutKind.Sequential)]
internal unsafe struct IoUringParams
{
    public uint SqEntries;
    public uint CqEntries;
    public uint Flags;
    public uint SqThreadCpu;
    public uint SqThreadIdle;
    public uint Features;
    public uint WqFd;
    public fixed uint Resv[3];
    public IoSqRingOffsets SqOff;
    public IoCqRingOffsets CqOff;
}

/// <summary><c>struct io_uring_sqe</c> (64 bytes), with the members Spindle fills.</summary>
[StructLayout(LayoutKind.Explicit, Size = 64)]
internal struct IoUringSqe
{
    [FieldOffset(0)] public byte Opcode;
    [FieldOffset(1)] public byte Flags;
    [FieldOffset(2)] public ushort IoPrio;
    [FieldOffset(4)] public int Fd;
    [FieldOffset(8)] public ulong Offset;     // off / addr2
    [FieldOffset(16)] public ulong Address;   // addr / splice_off_in
    [FieldOffset(24)] public uint Length;
    [FieldOffset(28)] public uint OpFlags;    // rw_flags, fsync_flags, cancel_flags, ...
    [FieldOffset(32)] public ulong UserData;
    [FieldOffset(40)] public ushort BufIndex;
    [FieldOffset(42)] public ushort Personality;
    [FieldOffset(44)] public int SpliceFdIn;
    [FieldOffset(48)] public ulong Address3;
    [FieldOffset(56)] public ulong Pad;
}

/// <summary><c>struct io_uring_cqe</c> (16 bytes).</summary>
[StructLayout(LayoutKind.Sequential)]
internal struct IoUringCqe
{
    public ulong UserData;
    public int Result;
    public uint Flags;
}

/// <summary>The io_uring system calls, through libc's <c>syscall</c>.</summary>
internal static unsafe class IoUringSyscalls
{
    // io_uring's numbers come from the unified table (425/426) on every architecture Linux added after 5.1.
    private static readonly long s_setup = RuntimeInformation.ProcessArchitecture switch
    {
        Architecture.X64 or Architecture.Arm64 or Architecture.Arm or Architecture.RiscV64 or Architecture.LoongArch64 => 425,
        _ => -1,
    };

    private static long Enter_ => s_setup < 0 ? -1 : s_setup + 1;

    private static long Register_ => s_setup < 0 ? -1 : s_setup + 2;

    /// <summary>Whether this architecture has known io_uring system call numbers.</summary>
    internal static bool Supported => s_setup > 0;

    /// <summary><c>io_uring_setup</c>: the ring's descriptor, or -1 with errno set.</summary>
    internal static int Setup(uint entries, IoUringParams* parameters)
        => (int)Libc.Syscall(s_setup, entries, (long)parameters, 0, 0, 0, 0);

    /// <summary><c>io_uring_register</c>: 0 (or the opcode's result), or -1 with errno set.</summary>
    internal static int Register(int ringFd, uint opcode, void* argument, uint count)
        => (int)Libc.Syscall(Register_, ringFd, opcode, (long)argument, count, 0, 0);

    /// <summary><c>io_uring_enter</c> without a signal mask: SQEs consumed, or -1 with errno set.</summary>
    internal static int Enter(int ringFd, uint toSubmit, uint minComplete, uint flags)
        => (int)Libc.Syscall(Enter_, ringFd, toSubmit, minComplete, flags, 0, 0);

    /// <summary>
    /// <c>io_uring_enter</c> submitting <paramref name="toSubmit"/> SQEs and waiting for <paramref name="minComplete"/>
    /// completions at most <paramref name="timeoutNanoseconds"/> (<c>IORING_ENTER_EXT_ARG</c>): SQEs consumed, or -1 with
    /// errno set (ETIME when the time ran out).
    /// </summary>
    internal static int Wait(int ringFd, uint toSubmit, uint minComplete, long timeoutNanoseconds)
    {
        KernelTimespec timeout = new() { Seconds = timeoutNanoseconds / 1_000_000_000, Nanoseconds = timeoutNanoseconds % 1_000_000_000 };
        GetEventsArgument argument = new() { Timespec = (ulong)&timeout };
        return (int)Libc.Syscall(Enter_, ringFd, toSubmit, minComplete, IoUringConstants.IORING_ENTER_GETEVENTS | IoUringConstants.IORING_ENTER_EXT_ARG, (long)&argument, sizeof(GetEventsArgument));
    }

    // struct __kernel_timespec
    private struct KernelTimespec
    {
        public long Seconds;
        public long Nanoseconds;
    }

    // struct io_uring_getevents_arg
    private struct GetEventsArgument
    {
        public ulong SignalMask;
        public uint SignalMaskSize;
        public uint MinWaitMicroseconds;
        public ulong Timespec;
    }
}
