using System.Collections.Concurrent;
using Spindle.Interop;

namespace Spindle.Engines;

/// <summary>
/// Recognises RAM block devices (zram, brd, pmem), whose I/O the kernel does synchronously in the calling thread:
/// io_uring would hand each request to a kernel worker. File systems are told apart by <see cref="Handles.LocalFileSystems"/>.
/// </summary>
internal static unsafe class StorageBackends
{
    // Device number → whether its driver is a RAM device. A process sees few devices, and a device's
    // driver does not change while it is in use.
    private static readonly ConcurrentDictionary<ulong, bool> s_devices = new();

    /// <summary>Whether the block device <paramref name="major"/>:<paramref name="minor"/> is a RAM device (its sysfs name; cached per device).</summary>
    internal static bool IsRamBlockDevice(uint major, uint minor)
        => major != 0 // else no block device is behind it (a pseudo or network file system)
            && s_devices.GetOrAdd(((ulong)major << 32) | minor, static key => IsRamDevice((uint)(key >> 32), (uint)key));

    // /sys/dev/block/M:m links to the device's directory, named after its driver's devices
    // (zram0, ram0 for brd, pmem0); a partition's link ends in the partition's own name.
    private static bool IsRamDevice(uint major, uint minor)
    {
        string name = Path.GetFileName(LinkTarget($"/sys/dev/block/{major}:{minor}")) ?? "";
        return name.StartsWith("zram", StringComparison.Ordinal)
            || name.StartsWith("pmem", StringComparison.Ordinal)
            || (name.StartsWith("ram", StringComparison.Ordinal) && name.Length > 3 && char.IsAsciiDigit(name[3]));
    }

    /// <summary>Whether <paramref name="fd"/> is an epoll descriptor: read(2) fails with EINVAL at once, io_uring never completes it.</summary>
    internal static bool IsEpoll(int fd) => LinkTarget($"/proc/self/fd/{fd}") == "anon_inode:[eventpoll]";

    // A symbolic link's target; null where it cannot be read (no sysfs or procfs, as in some containers): then the
    // device counts as a real one and the descriptor as no epoll.
    private static string? LinkTarget(string path)
    {
        try
        {
            return new FileInfo(path).LinkTarget;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or System.Security.SecurityException)
        {
            return null;
        }
    }
}
