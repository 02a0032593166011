using System.Runtime.InteropServices;

namespace Spindle.Interop;

/// <summary>The calling thread's scheduling attributes: its policy, nice value and, on kernels with EEVDF (6.12+), its time slice.</summary>
internal static unsafe partial class Libc
{
    [LibraryImport(Lib, EntryPoint = "gettid")]
    internal static partial int GetTid();

    // sched_setattr and sched_getattr have no unified numbers: x86-64 314/315, i386 351/352, arm 380/381, the generic table 274/275.
    private static readonly long s_schedSetAttr = RuntimeInformation.ProcessArchitecture switch
    {
        Architecture.X64 => 314,
        Architecture.X86 => 351,
        Architecture.Arm => 380,
        Architecture.Arm64 or Architecture.RiscV64 or Architecture.LoongArch64 => 274,
        _ => -1,
    };

    /// <summary><c>struct sched_attr</c> (its first version, 48 bytes).</summary>
    [StructLayout(LayoutKind.Sequential)]
    internal struct SchedAttr
    {
        public uint Size;
        public uint Policy;      // SCHED_OTHER: 0, SCHED_BATCH: 3
        public ulong Flags;
        public int Nice;
        public uint Priority;
        public ulong Runtime;    // for SCHED_OTHER and SCHED_BATCH on EEVDF kernels: the requested time slice in ns (0: the default)
        public ulong Deadline;
        public ulong Period;
    }

    /// <summary>The calling thread's scheduling attributes; false where the kernel has no <c>sched_getattr</c>.</summary>
    internal static bool GetOwnSchedAttr(out SchedAttr attr)
    {
        attr = default;
        if (s_schedSetAttr < 0)
        {
            return false;
        }
        fixed (SchedAttr* pointer = &attr)
        {
            return Syscall(s_schedSetAttr + 1, 0, (long)pointer, sizeof(SchedAttr), 0, 0, 0) == 0;
        }
    }

    /// <summary>Sets the calling thread's scheduling attributes; false where the kernel refuses them.</summary>
    internal static bool SetOwnSchedAttr(SchedAttr attr)
    {
        if (s_schedSetAttr < 0)
        {
            return false;
        }
        attr.Size = (uint)sizeof(SchedAttr);
        return Syscall(s_schedSetAttr, 0, (long)&attr, 0, 0, 0, 0) == 0;
    }
}
