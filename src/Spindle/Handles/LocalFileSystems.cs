using System.Collections.Concurrent;
using Spindle.Interop;

namespace Spindle.Handles;

/// <summary>
/// Whether a file lives on a local disk or memory file system (<see cref="OpenedFile.WritesAreCopiesOn"/>), learned
/// once per device with one <c>fstatfs</c>, so that an open that already asked <c>fstat</c> knows it for free.
/// </summary>
internal static unsafe class LocalFileSystems
{
    // st_dev → local. A device number names one mounted file system while it is mounted; one reused by a later
    // mount can only misplace a close (ring or caller's thread), never change a result.
    private static readonly ConcurrentDictionary<ulong, bool> s_devices = new();

    /// <summary>Whether the file system of <paramref name="device"/>, which <paramref name="fd"/> is on, is a local one.</summary>
    internal static bool IsLocal(ulong device, int fd)
    {
        if (s_devices.TryGetValue(device, out bool local))
        {
            return local;
        }
        bool? asked = Ask(fd);
        if (asked is bool known)
        {
            s_devices.TryAdd(device, known);
        }
        return asked == true;
    }

    /// <summary>
    /// Whether the file system <paramref name="fd"/> is on is a local disk or memory one, whose close(2) does no I/O
    /// of its own (one fstatfs, not remembered); false for network and FUSE file systems and any not known.
    /// </summary>
    internal static bool IsLocal(int fd) => Ask(fd) == true;

    // One fstatfs: null when it failed.
    private static bool? Ask(int fd)
    {
        // struct statfs: f_type is the first field (a long) on 64-bit Linux.
        byte* buffer = stackalloc byte[256];
        return Libc.FStatFs(fd, buffer) == 0 ? OpenedFile.WritesAreCopiesOn(*(long*)buffer) : null;
    }
}
