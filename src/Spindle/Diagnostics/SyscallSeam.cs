using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;
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

    /// <summary><c>io_uring_enter</c> for the whole ring: fails with EINTR, EBUSY or EAGAIN.</summary>
    RingSubmit,
}

/// <summary>
/// The faults a test injects (the test project's <c>SyscallFaults</c> implements this): decisions per descriptor,
/// so that tests running in parallel do not see each other's faults. Called from any thread.
/// </summary>
internal interface ISyscallFaults
{
    /// <summary>The fault for the next call of <paramref name="kind"/> on <paramref name="fd"/> (<see cref="SyscallFault.None"/> when it is not armed).</summary>
    SyscallFault Next(int fd, SyscallKind kind);

    /// <summary>Whether <paramref name="fd"/> is armed: the read fast paths then step aside, so that its reads meet the seam.</summary>
    bool IsArmed(int fd);

    /// <summary>The fault for the next <c>io_uring_enter</c> of the process.</summary>
    SyscallFault NextRingEnter();

    /// <summary>Whether <c>io_uring_setup</c> fails with EPERM, as under <c>kernel.io_uring_disabled=2</c> or seccomp.</summary>
    bool RingSetupRefused { get; }
}

/// <summary>
/// The one test seam at the system-call boundary. <see cref="Faults"/> is null outside tests: each system call of the
/// I/O loops reads it once and, null, makes its call directly. While a test has set it, the calls go through here,
/// which applies the fault it decides (an errno without reaching the kernel, or a shortened transfer).
/// </summary>
internal static unsafe class SyscallSeam
{
    private static volatile ISyscallFaults? s_faults;

    /// <summary>The faults tests inject, or null (always, outside tests).</summary>
    internal static ISyscallFaults? Faults
    {
        get => s_faults;
        set => s_faults = value;
    }

    /// <summary>Whether a test has set the seam.</summary>
    internal static bool Enabled => s_faults is not null;

    /// <summary>Whether <c>io_uring_setup</c> is made to fail.</summary>
    internal static bool RingSetupRefused => s_faults?.RingSetupRefused == true;

    /// <summary>Whether faults are armed on the handle's descriptor.</summary>
    internal static bool IsArmed(SafeFileHandle handle) => s_faults?.IsArmed((int)handle.DangerousGetHandle()) == true;

    /// <summary>The fault for the next call of <paramref name="kind"/> on <paramref name="fd"/>.</summary>
    internal static SyscallFault Decide(int fd, SyscallKind kind) => s_faults?.Next(fd, kind) ?? SyscallFault.None;

    /// <summary>
    /// io_uring_enter through the seam: true with the negative errno when the call must fail without reaching the
    /// kernel. EINTR stands for an interrupt, EBUSY (for <see cref="SyscallFault.IoError"/>) and EAGAIN (for
    /// <see cref="SyscallFault.NoSpace"/>) for a kernel that cannot take more submissions now.
    /// </summary>
    internal static bool FailRingEnter(out int result)
    {
        result = (s_faults?.NextRingEnter() ?? SyscallFault.None) switch
        {
            SyscallFault.Interrupt => -Errno.EINTR,
            SyscallFault.IoError => -Errno.EBUSY,
            SyscallFault.NoSpace => -Errno.EAGAIN,
            _ => 0,
        };
        return result != 0;
    }

    /// <summary>The errno a failing fault stands for, or 0.</summary>
    internal static int ErrnoOf(SyscallFault fault) => fault switch
    {
        SyscallFault.Interrupt => Errno.EINTR,
        SyscallFault.IoError => Errno.EIO,
        SyscallFault.NoSpace => Errno.ENOSPC,
        _ => 0,
    };

    // Applies the fault planned for one single-buffer call: true (with the call's result) when it fails the call;
    // otherwise a short transfer, where one is plausible, halves the count.
    private static bool FailsOrShortens(ISyscallFaults faults, SafeFileHandle handle, SyscallKind kind, bool mayShorten, ref nuint count, out nint failed)
    {
        SyscallFault fault = faults.Next((int)handle.DangerousGetHandle(), kind);
        if (ErrnoOf(fault) is int errno and not 0)
        {
            failed = Fail(errno);
            return true;
        }
        if (fault == SyscallFault.ShortTransfer && mayShorten)
        {
            count = Shorten(count);
        }
        failed = 0;
        return false;
    }

    /// <summary><c>pread</c> (or <c>read</c> for a negative offset) through <paramref name="faults"/>.</summary>
    internal static nint Read(ISyscallFaults faults, SafeFileHandle handle, byte* buffer, nuint count, long offset)
    {
        if (FailsOrShortens(faults, handle, SyscallKind.Read, Plausible(offset), ref count, out nint failed))
        {
            return failed;
        }
        return offset >= 0 ? Libc.PRead(handle, buffer, count, offset) : Libc.Read(handle, buffer, count);
    }

    /// <summary><c>pwrite</c> (or <c>write</c> for a negative offset) through <paramref name="faults"/>.</summary>
    internal static nint Write(ISyscallFaults faults, SafeFileHandle handle, byte* buffer, nuint count, long offset)
    {
        if (FailsOrShortens(faults, handle, SyscallKind.Write, Plausible(offset), ref count, out nint failed))
        {
            return failed;
        }
        return offset >= 0 ? Libc.PWrite(handle, buffer, count, offset) : Libc.Write(handle, buffer, count);
    }

    /// <summary><c>pwritev2(RWF_DSYNC)</c> of one buffer through <paramref name="faults"/>.</summary>
    internal static nint WriteDataSync(ISyscallFaults faults, SafeFileHandle handle, byte* buffer, nuint count, long offset)
    {
        if (FailsOrShortens(faults, handle, SyscallKind.Write, mayShorten: true, ref count, out nint failed))
        {
            return failed;
        }
        return Libc.PWriteV2(handle, buffer, count, offset, Libc.RWF_DSYNC);
    }

    /// <summary><c>preadv</c>/<c>pwritev</c> (or <c>readv</c>/<c>writev</c>) through <paramref name="faults"/>; a short transfer cuts the list to half its bytes.</summary>
    internal static nint Vector(ISyscallFaults faults, SafeFileHandle handle, IoVector* vectors, int count, long offset, bool write)
    {
        SyscallFault fault = faults.Next((int)handle.DangerousGetHandle(), write ? SyscallKind.WriteVector : SyscallKind.ReadVector);
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
            (true, true) => Libc.PWriteV(handle, vectors, count, offset),
            (true, false) => Libc.WriteV(handle, vectors, count),
            (false, true) => Libc.PReadV(handle, vectors, count, offset),
            (false, false) => Libc.ReadV(handle, vectors, count),
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
}
