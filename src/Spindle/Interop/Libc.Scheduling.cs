using System.Runtime.InteropServices;

namespace Spindle.Interop;

/// <summary>The scheduling calls for one thread: its nice value and, on kernels with EEVDF (6.12+), its time slice.</summary>
internal static unsafe partial class Libc
{
    private const int PrioProcess = 0; // PRIO_PROCESS: with a thread id, one thread

    [LibraryImport(Lib, EntryPoint = "gettid")]
    internal static partial int GetTid();

    [LibraryImport(Lib, EntryPoint = "getpriority", SetLastError = true)]
    private static partial int GetPriority(int which, int who);

    [LibraryImport(Lib, EntryPoint = "setpriority", SetLastError = true)]
    private static partial int SetPriority(int which, int who, int priority);

    /// <summary>The nice value of thread <paramref name="tid"/>, or null when it cannot be read.</summary>
    internal static int? ThreadNice(int tid)
    {
        int nice = GetPriority(PrioProcess, tid);
        return nice == -1 && Marshal.GetLastPInvokeError() != 0 ? null : nice;
    }

    /// <summary>Sets thread <paramref name="tid"/>'s nice value; false when not permitted (an unprivileged lower nice).</summary>
    internal static bool SetThreadNice(int tid, int nice) => SetPriority(PrioProcess, tid, nice) == 0;

    // sched_setattr has no unified number: x86-64 314, i386 351, arm 380, the generic table 274.
    private static readonly long s_schedSetAttr = RuntimeInformation.ProcessArchitecture switch
    {
        Architecture.X64 => 314,
        Architecture.X86 => 351,
        Architecture.Arm => 380,
        Architecture.Arm64 or Architecture.RiscV64 or Architecture.LoongArch64 => 274,
        _ => -1,
    };

    [StructLayout(LayoutKind.Sequential)]
    private struct SchedAttr
    {
        public uint Size;
        public uint Policy;      // SCHED_OTHER: 0
        public ulong Flags;
        public int Nice;
        public uint Priority;
        public ulong Runtime;    // for SCHED_OTHER on EEVDF kernels: the requested time slice, in ns
        public ulong Deadline;
        public ulong Period;
    }

    /// <summary>
    /// Keeps the calling thread in the normal policy at <paramref name="nice"/> and asks for a time slice of
    /// <paramref name="sliceNanoseconds"/>: a shorter slice makes the scheduler run the thread sooner when it
    /// wakes. False where the kernel refuses it (older kernels ignore the slice; their result is true).
    /// </summary>
    internal static bool SetOwnTimeSlice(int nice, ulong sliceNanoseconds)
    {
        if (s_schedSetAttr < 0)
        {
            return false;
        }
        var attr = new SchedAttr { Size = (uint)sizeof(SchedAttr), Nice = nice, Runtime = sliceNanoseconds };
        return Syscall(s_schedSetAttr, 0, (long)&attr, 0, 0, 0, 0) == 0;
    }
}
