using System.Collections.Concurrent;
using System.Runtime.InteropServices;
using Spindle.Interop;

namespace Spindle.Diagnostics;

/// <summary>What the test seam does to one system call.</summary>
internal enum SyscallFault : byte
{
    /// <summary>The call runs as asked.</summary>
    None,

    /// <summary>The call fails with EINTR without reaching the kernel.</summary>
    Interrupt,

    /// <summary>The call runs with half the requested length (at least one byte), as a signal or a full pipe would make it.</summary>
    ShortTransfer,

    /// <summary>The call fails with EIO without reaching the kernel.</summary>
    IoError,

    /// <summary>The call fails with ENOSPC without reaching the kernel.</summary>
    NoSpace,
}

/// <summary>The kinds of system call the seam sees.</summary>
internal enum SyscallKind : byte
{
    Read,
    Write,
    ReadVector,
    WriteVector,

    /// <summary><c>io_uring_setup</c>: an engine that consults the seam treats any fault as "refused".</summary>
    RingSetup,

    /// <summary><c>io_uring_enter</c> for the whole ring (<see cref="SyscallFaults.ArmRingEnter"/>): fails with EINTR, EBUSY or EAGAIN.</summary>
    RingSubmit,
}

/// <summary>Decides the fault for each system call on an armed descriptor; called from any thread.</summary>
internal abstract class FaultPlan
{
    internal abstract SyscallFault Next(SyscallKind kind);
}

/// <summary>A fixed list of faults, one per call, then none.</summary>
internal sealed class ScriptedFaultPlan(params SyscallFault[] faults) : FaultPlan
{
    private int _next = -1;

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
/// The internal test seam at the system-call boundary. When <see cref="Enabled"/> is false (always, outside
/// tests) the I/O loops make their system calls directly and the only cost is one volatile read. Tests arm a
/// descriptor with a <see cref="FaultPlan"/>; calls on other descriptors pass through untouched, so tests
/// that run in parallel do not see each other's faults.
/// </summary>
internal static unsafe class SyscallFaults
{
    /// <summary>Whether any descriptor is armed; the I/O loops check this before calling into the seam.</summary>
    internal static volatile bool Enabled;

    // Created when a test first arms a descriptor: the seam's type must load in any process, even one
    // that cannot load System.Collections.Concurrent (out of descriptors at its first Spindle call).
    private static ConcurrentDictionary<int, FaultPlan>? s_plans;
    private static readonly object s_gate = new();
    private static long s_interrupts;
    private static long s_shortTransfers;
    private static long s_errors;

    /// <summary>EINTR results injected since the process started.</summary>
    internal static long Interrupts => Interlocked.Read(ref s_interrupts);

    /// <summary>Shortened transfers injected since the process started.</summary>
    internal static long ShortTransfers => Interlocked.Read(ref s_shortTransfers);

    /// <summary>Error results (EIO, ENOSPC, refused ring setup) injected since the process started.</summary>
    internal static long Errors => Interlocked.Read(ref s_errors);

    // Faults for io_uring_enter, which belongs to the ring rather than to one descriptor: null when not armed.
    private static volatile FaultPlan? s_enterPlan;

    /// <summary>Injects <paramref name="plan"/>'s faults into every <c>io_uring_enter</c> of the process until the scope is disposed.</summary>
    internal static IDisposable ArmRingEnter(FaultPlan plan)
    {
        lock (s_gate)
        {
            s_enterPlan = plan;
            Enabled = true;
        }
        return new EnterScope();
    }

    /// <summary>
    /// io_uring_enter through the seam: true with the negative errno when the call must fail without reaching the
    /// kernel. EINTR stands for an interrupt, EBUSY (for <see cref="SyscallFault.IoError"/>) and EAGAIN (for
    /// <see cref="SyscallFault.NoSpace"/>) for a kernel that cannot take more submissions now.
    /// </summary>
    internal static bool FailRingEnter(out int result)
    {
        SyscallFault fault = s_enterPlan?.Next(SyscallKind.RingSubmit) ?? SyscallFault.None;
        result = fault switch
        {
            SyscallFault.Interrupt => -Errno.EINTR,
            SyscallFault.IoError => -Errno.EBUSY,
            SyscallFault.NoSpace => -Errno.EAGAIN,
            _ => 0,
        };
        if (result != 0)
        {
            Interlocked.Increment(ref fault == SyscallFault.Interrupt ? ref s_interrupts : ref s_errors);
        }
        return result != 0;
    }

    /// <summary>Whether <c>io_uring_setup</c> is made to fail with EPERM, as under <c>kernel.io_uring_disabled=2</c> or seccomp.</summary>
    internal static bool RingSetupRefused { get; private set; }

    /// <summary>Makes every later <c>io_uring_setup</c> in this process fail (for a child process: the engine is chosen once).</summary>
    internal static void RefuseRingSetup()
    {
        RingSetupRefused = true;
        Interlocked.Increment(ref s_errors);
        Enabled = true;
    }

    /// <summary>Whether faults are armed on the handle's descriptor (the read fast path then steps aside so that reads meet the seam).</summary>
    internal static bool IsArmed(Microsoft.Win32.SafeHandles.SafeFileHandle handle) => s_plans?.ContainsKey((int)handle.DangerousGetHandle()) == true;

    /// <summary>Injects <paramref name="plan"/>'s faults into every call on <paramref name="fd"/> until the scope is disposed.</summary>
    internal static IDisposable Arm(int fd, FaultPlan plan)
    {
        lock (s_gate)
        {
            (s_plans ??= new())[fd] = plan;
            Enabled = true;
        }
        return new Scope(fd);
    }

    /// <summary>The fault for the next call of <paramref name="kind"/> on <paramref name="fd"/>, counted.</summary>
    internal static SyscallFault Decide(int fd, SyscallKind kind)
    {
        if (s_plans is not { } plans || !plans.TryGetValue(fd, out FaultPlan? plan))
        {
            return SyscallFault.None;
        }
        SyscallFault fault = plan.Next(kind);
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

    /// <summary>The errno a failing fault stands for, or 0.</summary>
    internal static int ErrnoOf(SyscallFault fault) => fault switch
    {
        SyscallFault.Interrupt => Errno.EINTR,
        SyscallFault.IoError => Errno.EIO,
        SyscallFault.NoSpace => Errno.ENOSPC,
        _ => 0,
    };

    /// <summary><c>pread</c> (or <c>read</c> for a negative offset) through the seam.</summary>
    internal static nint Read(int fd, byte* buffer, nuint count, long offset)
    {
        SyscallFault fault = Decide(fd, SyscallKind.Read);
        if (ErrnoOf(fault) is int errno and not 0)
        {
            return Fail(errno);
        }
        count = fault == SyscallFault.ShortTransfer && Plausible(offset) ? Shorten(count) : count;
        return offset >= 0 ? Libc.PRead(fd, buffer, count, offset) : Libc.Read(fd, buffer, count);
    }

    /// <summary><c>pwrite</c> (or <c>write</c> for a negative offset) through the seam.</summary>
    internal static nint Write(int fd, byte* buffer, nuint count, long offset)
    {
        SyscallFault fault = Decide(fd, SyscallKind.Write);
        if (ErrnoOf(fault) is int errno and not 0)
        {
            return Fail(errno);
        }
        count = fault == SyscallFault.ShortTransfer && Plausible(offset) ? Shorten(count) : count;
        return offset >= 0 ? Libc.PWrite(fd, buffer, count, offset) : Libc.Write(fd, buffer, count);
    }

    /// <summary><c>preadv</c>/<c>pwritev</c> (or <c>readv</c>/<c>writev</c>) through the seam; a short transfer cuts the list to half its bytes.</summary>
    internal static nint Vector(int fd, IoVector* vectors, int count, long offset, bool write)
    {
        SyscallFault fault = Decide(fd, write ? SyscallKind.WriteVector : SyscallKind.ReadVector);
        if (ErrnoOf(fault) is int errno and not 0)
        {
            return Fail(errno);
        }
        IoVector* cut = stackalloc IoVector[count];
        if (fault == SyscallFault.ShortTransfer && Plausible(offset))
        {
            count = CutVectors(vectors, count, cut);
            vectors = cut;
        }
        return (write, offset >= 0) switch
        {
            (true, true) => Libc.PWriteV(fd, vectors, count, offset),
            (true, false) => Libc.WriteV(fd, vectors, count),
            (false, true) => Libc.PReadV(fd, vectors, count, offset),
            (false, false) => Libc.ReadV(fd, vectors, count),
        };
    }

    private static nint Fail(int errno)
    {
        Marshal.SetLastPInvokeError(errno);
        return -1;
    }

    // The kernel shortens only transfers it accepts; near the largest offsets a shorter request could turn the
    // kernel's EINVAL (offset + length overflows) into a different error, so the seam leaves those alone.
    internal static bool Plausible(long offset) => offset < 1L << 40;

    internal static nuint Shorten(nuint count) => count > 1 ? count / 2 : count;

    // Copies the iovecs that hold the first half of the bytes into cut, ending inside an iovec where needed.
    internal static int CutVectors(IoVector* vectors, int count, IoVector* cut)
    {
        nuint total = 0;
        for (int i = 0; i < count; i++)
        {
            total += vectors[i].Count;
        }
        nuint left = Shorten(total);
        int used = 0;
        for (int i = 0; i < count && left > 0; i++)
        {
            nuint take = Math.Min(left, vectors[i].Count);
            cut[used++] = new IoVector { Base = vectors[i].Base, Count = take };
            left -= take;
        }
        if (used == 0 && count > 0)
        {
            cut[used++] = vectors[0];
        }
        return used;
    }

    private sealed class EnterScope : IDisposable
    {
        public void Dispose()
        {
            lock (s_gate)
            {
                s_enterPlan = null;
                Enabled = s_plans is { IsEmpty: false } || RingSetupRefused;
            }
        }
    }

    private sealed class Scope(int fd) : IDisposable
    {
        public void Dispose()
        {
            lock (s_gate)
            {
                s_plans?.TryRemove(fd, out _);
                Enabled = s_plans is { IsEmpty: false } || s_enterPlan is not null || RingSetupRefused;
            }
        }
    }
}
