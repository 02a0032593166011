using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;

namespace Spindle.Direct;

/// <summary>
/// The handles Spindle opened with O_DIRECT, with their alignment. Consulted before every I/O call,
/// so the common case (no direct handle was ever opened) is one static read.
/// </summary>
internal static class DirectHandles
{
    // Entries die with their handles; the table holds no strong reference to a handle.
    private static readonly ConditionalWeakTable<SafeFileHandle, StrongBox<DirectIOAlignment>> s_handles = new();

    // Set once the first direct handle is registered; never cleared (the check then costs one lookup).
    private static volatile bool s_any;

    internal static bool Any => s_any;

    internal static void Register(SafeFileHandle handle, DirectIOAlignment alignment)
    {
        s_handles.AddOrUpdate(handle, new StrongBox<DirectIOAlignment>(alignment));
        s_any = true;
    }

    internal static bool TryGet(SafeFileHandle handle, out DirectIOAlignment alignment)
    {
        if (s_handles.TryGetValue(handle, out StrongBox<DirectIOAlignment>? box))
        {
            alignment = box.Value;
            return true;
        }
        alignment = default;
        return false;
    }
}
