using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;

namespace Spindle.Syscalls;

/// <summary>
/// A reference on a handle that outlives the system call that passed its descriptor: while the kernel may still use
/// the descriptor after that call returned (an io_uring request in flight, a descriptor in a poll set), a concurrent
/// <c>Dispose</c> must not close it, or the kernel could act on a file opened meanwhile under the same number.
/// Taken once (<see cref="Acquire"/>), released exactly once (<see cref="Release"/>, on the completion) from the
/// field that holds it. Calls that finish before returning take no lease: the imports take the
/// <see cref="SafeHandle"/>, and the marshaller holds the reference for the call.
/// </summary>
internal struct HandleLease
{
    private SafeFileHandle? _handle; // referenced while not null

    private HandleLease(SafeFileHandle handle) => _handle = handle;

    /// <summary>The referenced handle, or null when none is held.</summary>
    internal readonly SafeFileHandle? Handle => _handle;

    /// <summary>References <paramref name="handle"/>.</summary>
    /// <exception cref="ObjectDisposedException">The handle is closed.</exception>
    internal static HandleLease Acquire(SafeFileHandle handle)
    {
        bool added = false;
        handle.DangerousAddRef(ref added); // succeeds (added) or throws: there is nothing to undo
        return new HandleLease(handle);
    }

    /// <summary>Drops the reference if one is held; a second call finds none (the field is cleared atomically).</summary>
    internal void Release() => Interlocked.Exchange(ref _handle, null)?.DangerousRelease();
}
