using System.Reflection;
using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Interop;

namespace Spindle.Syscalls;

/// <summary>
/// Reaches the state System.IO keeps inside <see cref="SafeFileHandle"/> on Unix (path, lock,
/// delete-on-close, IsAsync, the cached seekability) so that a handle Spindle opened behaves exactly
/// like one from <see cref="File.OpenHandle"/>: its <c>Dispose</c> unlocks and deletes as System.IO's
/// does, and <see cref="FileStream"/> built on it knows its name. If a runtime lacks one of these
/// members, Spindle keeps working with its own fallbacks.
/// </summary>
internal static class SafeFileHandleInternals
{
    [UnsafeAccessor(UnsafeAccessorKind.Field, Name = "_path")]
    private static extern ref string? PathField(SafeFileHandle handle);

    [UnsafeAccessor(UnsafeAccessorKind.Field, Name = "_deleteOnClose")]
    private static extern ref bool DeleteOnCloseField(SafeFileHandle handle);

    [UnsafeAccessor(UnsafeAccessorKind.Field, Name = "_isLocked")]
    private static extern ref bool IsLockedField(SafeFileHandle handle);

    // SafeHandle's reference count and its closed (1) and disposed (2) bits; one reference counts 4.
    [UnsafeAccessor(UnsafeAccessorKind.Field, Name = "_state")]
    private static extern ref int StateField(System.Runtime.InteropServices.SafeHandle handle);

    [UnsafeAccessor(UnsafeAccessorKind.Field, Name = "_ownsHandle")]
    private static extern ref bool OwnsHandleField(System.Runtime.InteropServices.SafeHandle handle);

    [UnsafeAccessor(UnsafeAccessorKind.Method, Name = "set_IsAsync")]
    private static extern void SetIsAsyncMethod(SafeFileHandle handle, bool value);

    [UnsafeAccessor(UnsafeAccessorKind.Method, Name = "get_CanSeek")]
    private static extern bool CanSeekMethod(SafeFileHandle handle);

    // The handle's cached seekability (a private enum UnsafeAccessor cannot type), and the boxed value
    // meaning "seekable"; null when this runtime lacks either.
    private static readonly FieldInfo? s_canSeekField = typeof(SafeFileHandle).GetField("_canSeek", BindingFlags.Instance | BindingFlags.NonPublic);
    private static readonly object? s_seekable = SeekableValue(s_canSeekField);

    // Whether this runtime has the members above; probed once.
    private static readonly bool s_available = Probe();

    internal static bool Available => s_available;

    private static readonly bool s_canSeekAvailable = ProbeCanSeek();

    private const int OneReference = 4;          // SafeHandle's state: open, not disposed, referenced by its owner only
    private const int ClosedAndDisposed = 3;     // closed and disposed, no reference left: its release never runs
    private static readonly bool s_canTake = ProbeTake();

    private static bool Probe()
    {
        try
        {
            using var probe = new SafeFileHandle(-1, ownsHandle: false);
            _ = PathField(probe);
            _ = DeleteOnCloseField(probe);
            _ = IsLockedField(probe);
            SetIsAsyncMethod(probe, false);
            return true;
        }
        catch (Exception e) when (e is MissingMemberException or MemberAccessException)
        {
            return false;
        }
    }

    /// <summary>The path the handle was opened with, or null when unknown.</summary>
    internal static string? GetPath(SafeFileHandle handle) => s_available ? PathField(handle) : null;

    /// <summary>Whether the handle holds the <c>flock</c> that emulates its FileShare (not where locking is off, on NFS and SMB, or where the runtime is not understood).</summary>
    internal static bool IsLocked(SafeFileHandle handle) => s_available && IsLockedField(handle);

    /// <summary>Whether closing the handle deletes its file (FileOptions.DeleteOnClose); false where the runtime is not understood.</summary>
    internal static bool DeletesOnClose(SafeFileHandle handle) => s_available && DeleteOnCloseField(handle);

    /// <summary>Records what System.IO records on a handle it opens itself.</summary>
    internal static void Initialize(SafeFileHandle handle, string path, bool isAsync, bool deleteOnClose, bool isLocked)
    {
        if (!s_available)
        {
            return;
        }
        PathField(handle) = path;
        SetIsAsyncMethod(handle, isAsync);
        DeleteOnCloseField(handle) = deleteOnClose;
        IsLockedField(handle) = isLocked;
    }

    /// <summary>
    /// Records that the handle is seekable, as System.IO does once its open-time fstat finds a regular
    /// file, so that the first <see cref="CanSeek"/> makes no lseek. Only for a descriptor known to be a
    /// regular file.
    /// </summary>
    internal static void MarkSeekable(SafeFileHandle handle)
    {
        if (s_seekable is not null)
        {
            s_canSeekField!.SetValue(handle, s_seekable);
        }
    }

    private static object? SeekableValue(FieldInfo? field)
    {
        // Only an enum whose member "True" is the cached "yes" is understood; anything else is left alone.
        if (field is null || !field.FieldType.IsEnum || !Enum.IsDefined(field.FieldType, "True"))
        {
            return null;
        }
        return Enum.Parse(field.FieldType, "True");
    }

    /// <summary>
    /// Whether the handle supports positional I/O. Uses the handle's own cached answer when the
    /// runtime exposes it (one lseek for the handle's lifetime), else asks the kernel.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static bool CanSeek(SafeFileHandle handle)
        => s_canSeekAvailable ? CanSeekMethod(handle) : AskKernelCanSeek(handle);

    private static bool AskKernelCanSeek(SafeFileHandle handle)
        => !handle.IsClosed && Libc.LSeek(handle, 0, LinuxConstants.SEEK_CUR) >= 0;

    // Probed once, on a closed handle (answers false without a system call), so that every call on the
    // hot path is a plain call with no exception handler around it.
    private static bool ProbeCanSeek()
    {
        try
        {
            var probe = new SafeFileHandle(-1, ownsHandle: false);
            probe.Dispose();
            return !CanSeekMethod(probe);
        }
        catch (Exception e) when (e is MissingMemberException or MemberAccessException)
        {
            return false;
        }
    }

    /// <summary>
    /// Takes the descriptor out of a handle only its owner holds (no operation has it referenced), doing first what
    /// its release would do (System.IO's: DeleteOnClose's unlink, then unlocking the <c>flock</c>): the handle is then
    /// closed and disposed, and the caller closes <paramref name="fd"/> (on the ring). False, and nothing done, when
    /// the handle is in use, closed, not owned, or this runtime's <see cref="System.Runtime.InteropServices.SafeHandle"/> is not understood.
    /// </summary>
    internal static bool TryTakeDescriptor(SafeFileHandle handle, out int fd)
    {
        fd = -1;
        if (!s_canTake || !s_available || handle.IsInvalid || !OwnsHandleField(handle)
            || Interlocked.CompareExchange(ref StateField(handle), ClosedAndDisposed, OneReference) != OneReference)
        {
            return false;
        }
        GC.SuppressFinalize(handle);
        fd = (int)handle.DangerousGetHandle();
        if (DeleteOnCloseField(handle))
        {
            Libc.Unlink(PathField(handle)!); // errors ignored, as System.IO's release ignores them
        }
        if (IsLockedField(handle))
        {
            // As System.IO's release: the lock goes first, so that a close that fails never leaves it held.
            Libc.FLock(fd, LinuxConstants.LOCK_UN);
            IsLockedField(handle) = false;
        }
        return true;
    }

    // The state word behaves as described on a handle of our own: taken, it reads closed and Dispose does nothing.
    private static bool ProbeTake()
    {
        try
        {
            var probe = new SafeFileHandle(-1, ownsHandle: false);
            if (StateField(probe) != OneReference || OwnsHandleField(probe)
                || Interlocked.CompareExchange(ref StateField(probe), ClosedAndDisposed, OneReference) != OneReference || !probe.IsClosed)
            {
                return false;
            }
            probe.Dispose();
            return StateField(probe) == ClosedAndDisposed;
        }
        catch (Exception e) when (e is MissingMemberException or MemberAccessException)
        {
            return false;
        }
    }
}
