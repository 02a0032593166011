using Spindle.Interop;

namespace Spindle.Engines.IoUring;

/// <summary>
/// A short time slice for the thread that polls a ring while it does (<see cref="EngineTunables.PollerSliceMicroseconds"/>):
/// it sleeps in the kernel until a completion comes, and on a machine whose cores CPU-bound work keeps busy, a thread
/// with the default slice that wakes waits for the running one's slice to end, with the device idle behind it. EEVDF
/// lets a thread with a shorter slice run first when it wakes; its share of the CPU stays the same. A pool thread
/// gets its own attributes back when it stops polling, so the user code it runs later sees no change. Kernels without
/// the per-thread slice ignore it; a kernel that refuses it is not asked again.
/// </summary>
internal readonly struct PollerTimeSlice : IDisposable
{
    private const uint SchedOther = 0;
    private const uint SchedBatch = 3;
    private const ulong ResetOnFork = 1; // SCHED_FLAG_RESET_ON_FORK, the one flag kept: the others (utilization clamps) need fields this form leaves out

    private static bool s_refused;
    private static ulong s_defaultRuntime; // what the kernel reports for a thread that never asked for a slice

    private readonly Libc.SchedAttr _original;
    private readonly bool _changed;

    private PollerTimeSlice(Libc.SchedAttr original)
    {
        _original = original;
        _changed = true;
    }

    /// <summary>
    /// Called by a ring's own thread when it starts, before it asks for anything: the slice the kernel reports for it
    /// is the default, which a thread given back its attributes gets as "no slice asked for" (0), not as a slice of
    /// its own that would stop following the system's setting.
    /// </summary>
    internal static void LearnDefault()
    {
        if (s_defaultRuntime == 0 && Libc.GetOwnSchedAttr(out Libc.SchedAttr attr))
        {
            s_defaultRuntime = attr.Runtime;
        }
    }

    /// <summary>Gives the calling thread the poller's slice until <see cref="Dispose"/>; nothing for a thread of another policy (real-time, idle) or one that has it already.</summary>
    internal static PollerTimeSlice Begin()
    {
        const ulong slice = EngineTunables.PollerSliceMicroseconds * 1_000UL;
        if (s_refused || !Libc.GetOwnSchedAttr(out Libc.SchedAttr attr) || attr.Policy is not (SchedOther or SchedBatch) || attr.Runtime == slice)
        {
            return default;
        }
        attr.Flags &= ResetOnFork;
        Libc.SchedAttr shorter = attr;
        shorter.Flags |= ResetOnFork; // threads it starts meanwhile (a pool's new worker) get the default slice, not this one
        shorter.Runtime = slice;
        if (!Libc.SetOwnSchedAttr(shorter))
        {
            s_refused = true;
            return default;
        }
        return new PollerTimeSlice(attr);
    }

    /// <summary>Puts back the thread's own slice.</summary>
    public void Dispose()
    {
        if (_changed)
        {
            Libc.SchedAttr original = _original;
            if (original.Runtime == s_defaultRuntime)
            {
                original.Runtime = 0;
            }
            Libc.SetOwnSchedAttr(original);
        }
    }
}
