using System.Collections.Concurrent;

namespace Spindle.Diagnostics;

// The tests' side of the system-call seam (the library's is Spindle.Diagnostics.SyscallSeam, null outside tests):
// plans that decide each call's fault, per descriptor, and the counts the tests read.

/// <summary>Decides the fault for each system call on an armed descriptor; called from any thread.</summary>
internal abstract class FaultPlan
{
    internal abstract SyscallFault Next(SyscallKind kind);
}

/// <summary>A fixed list of faults, one per call, then none.</summary>
internal sealed class ScriptedFaultPlan(params SyscallFault[] faults) : FaultPlan
{
    private int _next = -1;

    /// <summary>The calls the plan has decided so far (with no faults listed: a count of the descriptor's calls).</summary>
    internal int Calls => Volatile.Read(ref _next) + 1;

    internal override SyscallFault Next(SyscallKind kind)
    {
        int index = Interlocked.Increment(ref _next);
        return index < faults.Length ? faults[index] : SyscallFault.None;
    }
}

/// <summary>Seeded random faults with a percentage per fault; short transfers only for the kinds allowed.</summary>
internal sealed class RandomFaultPlan(int seed, int interruptPercent, int shortPercent, int errorPercent, bool shortReads = true) : FaultPlan
{
    private readonly Random _random = new(seed);

    internal override SyscallFault Next(SyscallKind kind)
    {
        int roll;
        lock (_random)
        {
            roll = _random.Next(100);
        }
        if (roll < interruptPercent)
        {
            return SyscallFault.Interrupt;
        }
        roll -= interruptPercent;
        if (roll < shortPercent)
        {
            return shortReads || kind is SyscallKind.Write or SyscallKind.WriteVector ? SyscallFault.ShortTransfer : SyscallFault.None;
        }
        roll -= shortPercent;
        return roll < errorPercent ? SyscallFault.IoError : SyscallFault.None;
    }
}

/// <summary>
/// Arms faults for tests: <see cref="Arm"/> injects a plan's faults into every call on one descriptor (calls on other
/// descriptors pass through untouched, so tests that run in parallel do not see each other's faults),
/// <see cref="ArmRingEnter"/> into every <c>io_uring_enter</c>, <see cref="RefuseRingSetup"/> refuses io_uring for the
/// process. The library's seam (<see cref="SyscallSeam.Faults"/>) is set while anything is armed.
/// </summary>
internal static class SyscallFaults
{
    private static readonly ConcurrentDictionary<int, FaultPlan> s_plans = new();
    private static readonly object s_gate = new();
    private static readonly Injector s_injector = new();
    private static volatile FaultPlan? s_enterPlan; // faults for io_uring_enter, which belongs to the ring rather than to one descriptor
    private static volatile bool s_ringSetupRefused;
    private static long s_interrupts;
    private static long s_shortTransfers;
    private static long s_errors;

    /// <summary>EINTR results injected since the process started.</summary>
    internal static long Interrupts => Interlocked.Read(ref s_interrupts);

    /// <summary>Shortened transfers injected since the process started.</summary>
    internal static long ShortTransfers => Interlocked.Read(ref s_shortTransfers);

    /// <summary>Error results (EIO, ENOSPC, refused ring setup) injected since the process started.</summary>
    internal static long Errors => Interlocked.Read(ref s_errors);

    /// <summary>Injects <paramref name="plan"/>'s faults into every call on <paramref name="fd"/> until the scope is disposed.</summary>
    internal static IDisposable Arm(int fd, FaultPlan plan)
    {
        lock (s_gate)
        {
            s_plans[fd] = plan;
            SyscallSeam.Faults = s_injector;
        }
        return new Scope(() => s_plans.TryRemove(fd, out _));
    }

    /// <summary>Injects <paramref name="plan"/>'s faults into every <c>io_uring_enter</c> of the process until the scope is disposed.</summary>
    internal static IDisposable ArmRingEnter(FaultPlan plan)
    {
        lock (s_gate)
        {
            s_enterPlan = plan;
            SyscallSeam.Faults = s_injector;
        }
        return new Scope(() => s_enterPlan = null);
    }

    /// <summary>Makes every later <c>io_uring_setup</c> in this process fail (for a child process: the engine is chosen once).</summary>
    internal static void RefuseRingSetup()
    {
        lock (s_gate)
        {
            s_ringSetupRefused = true;
            Interlocked.Increment(ref s_errors);
            SyscallSeam.Faults = s_injector;
        }
    }

    private static SyscallFault Counted(SyscallFault fault)
    {
        switch (fault)
        {
            case SyscallFault.Interrupt:
                Interlocked.Increment(ref s_interrupts);
                break;
            case SyscallFault.ShortTransfer:
                Interlocked.Increment(ref s_shortTransfers);
                break;
            case SyscallFault.IoError or SyscallFault.NoSpace:
                Interlocked.Increment(ref s_errors);
                break;
        }
        return fault;
    }

    private sealed class Injector : ISyscallFaults
    {
        public SyscallFault Next(int fd, SyscallKind kind)
            => s_plans.TryGetValue(fd, out FaultPlan? plan) ? Counted(plan.Next(kind)) : SyscallFault.None;

        public bool IsArmed(int fd) => s_plans.ContainsKey(fd);

        // io_uring_enter's faults are counted as EINTR or errors: the ring has no short transfer.
        public SyscallFault NextRingEnter()
        {
            SyscallFault fault = s_enterPlan?.Next(SyscallKind.RingSubmit) ?? SyscallFault.None;
            return fault is SyscallFault.Interrupt or SyscallFault.IoError or SyscallFault.NoSpace ? Counted(fault) : SyscallFault.None;
        }

        public bool RingSetupRefused => s_ringSetupRefused;
    }

    private sealed class Scope(Action disarm) : IDisposable
    {
        public void Dispose()
        {
            lock (s_gate)
            {
                disarm();
                if (s_plans.IsEmpty && s_enterPlan is null && !s_ringSetupRefused)
                {
                    SyscallSeam.Faults = null;
                }
            }
        }
    }
}
