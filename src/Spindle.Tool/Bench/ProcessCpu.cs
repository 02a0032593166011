using System.Runtime.InteropServices;

namespace Spindle.Tool.Bench;

/// <summary>
/// The CPU time this process has used, user plus system, summed over all its threads (<c>getrusage(RUSAGE_SELF)</c>):
/// read before and after a measured batch, the difference divided by the operations is the CPU per operation.
/// </summary>
internal static partial class ProcessCpu
{
    private const int RusageSelf = 0;

    /// <summary>User + system CPU time so far in nanoseconds, or -1 when the kernel does not say.</summary>
    public static long Nanoseconds()
    {
        if (GetRusage(RusageSelf, out Rusage usage) != 0)
        {
            return -1;
        }
        return (usage.UserSeconds + usage.SystemSeconds) * 1_000_000_000 + (usage.UserMicroseconds + usage.SystemMicroseconds) * 1_000;
    }

    /// <summary>
    /// How many times so far a thread of this process was switched out because its time slice ended or another
    /// task preempted it (<c>ru_nivcsw</c>), or -1 when the kernel does not say. A batch during which it grew was
    /// interrupted by other work on the machine.
    /// </summary>
    public static long InvoluntarySwitches() => GetRusage(RusageSelf, out Rusage usage) == 0 ? usage.InvoluntarySwitches : -1;

    /// <summary>
    /// How many times so far a thread of this process was switched out, voluntarily (it waited: a sleep, a
    /// futex, a blocking read) or not (<c>ru_nvcsw</c> + <c>ru_nivcsw</c>), or -1 when the kernel does not say.
    /// Every hand-off of a completion from one thread to a sleeping one shows here as one switch or more.
    /// </summary>
    public static long ContextSwitches() => GetRusage(RusageSelf, out Rusage usage) == 0 ? usage.VoluntarySwitches + usage.InvoluntarySwitches : -1;

    // struct rusage on 64-bit Linux: two struct timeval, then 14 longs, the last two ru_nvcsw and ru_nivcsw.
    [StructLayout(LayoutKind.Sequential)]
    private struct Rusage
    {
        public long UserSeconds;
        public long UserMicroseconds;
        public long SystemSeconds;
        public long SystemMicroseconds;
        private unsafe fixed long _rest[12];
        public long VoluntarySwitches;
        public long InvoluntarySwitches;
    }

    [LibraryImport("libc", EntryPoint = "getrusage")]
    private static partial int GetRusage(int who, out Rusage usage);
}
