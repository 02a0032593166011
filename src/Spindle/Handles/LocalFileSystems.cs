using System.Collections.Concurrent;
using Microsoft.Win32.SafeHandles;
using Spindle.Interop;

namespace Spindle.Handles;

/// <summary>
/// The kind of a file's file system (<see cref="FileSystemKind"/>). For a file system on a block device it is learned
/// once per device with one <c>fstatfs</c>, so that an open that already asked <c>fstat</c> knows it for a dictionary
/// lookup; an anonymous device's number (tmpfs, FUSE, overlayfs, NFS, btrfs subvolumes) is given again to a later mount,
/// so those are asked when the kind is first needed, one <c>fstatfs</c> per handle. Whether a file system that is
/// neither a local disk nor memory refuses non-blocking reads is a property of its type, probed once per type.
/// </summary>
internal static unsafe class LocalFileSystems
{
    // The caches live in classes of their own, so that compiling the methods here loads no other assembly: the facts of a
    // handle are learned before an engine is chosen, possibly while the process is out of descriptors, and the runtime
    // remembers a failed assembly load for good (Diagnostics/DependencyLoader.cs).
    private static class Devices
    {
        private static readonly ConcurrentDictionary<ulong, FileSystemKind> s_kinds = new();  // block devices' st_dev → kind

        internal static bool TryGet(ulong device, out FileSystemKind kind) => s_kinds.TryGetValue(device, out kind);

        internal static void Add(ulong device, FileSystemKind kind) => s_kinds.TryAdd(device, kind);
    }

    private static class RefusingTypes
    {
        private static readonly ConcurrentDictionary<long, bool> s_types = new();             // statfs type → refuses RWF_NOWAIT

        internal static bool TryGet(long type, out bool refuses) => s_types.TryGetValue(type, out refuses);

        internal static void Add(long type, bool refuses) => s_types.TryAdd(type, refuses);
    }

    /// <summary>
    /// The kind of the file system of <paramref name="device"/>, which <paramref name="fd"/> (open for reading) is on:
    /// for a block device from the per-device cache (one fstatfs the first time); <see cref="FileSystemKind.Unknown"/> for
    /// an anonymous device, whose kind is asked when needed (<see cref="Ask"/>), and when fstatfs failed.
    /// </summary>
    internal static FileSystemKind KindOf(ulong device, SafeFileHandle fd)
    {
        if (Major(device) == 0)
        {
            return FileSystemKind.Unknown;
        }
        if (Devices.TryGet(device, out FileSystemKind kind))
        {
            return kind;
        }
        kind = Ask(fd, readable: true);
        if (kind != FileSystemKind.Unknown)
        {
            Devices.Add(device, kind);
        }
        return kind;
    }

    // The major number of a Linux st_dev (glibc's gnu_dev_major).
    private static uint Major(ulong device) => (uint)(((device >> 32) & 0xFFFFF000) | ((device >> 8) & 0xFFF));

    /// <summary>
    /// Whether the file system <paramref name="fd"/> is on is a local disk or memory one, whose close(2) does no I/O
    /// of its own (one fstatfs, not remembered); false for network and FUSE file systems and any not known.
    /// </summary>
    internal static bool IsLocal(SafeFileHandle fd) => IsLocal(Ask(fd, readable: false));

    /// <summary>Whether a file system of this kind is a local disk or memory one (false for any other, and for one not known).</summary>
    internal static bool IsLocal(FileSystemKind kind) => kind is FileSystemKind.LocalDisk or FileSystemKind.Memory;

    /// <summary>
    /// The kind of the file system <paramref name="fd"/> is on (one fstatfs; <see cref="FileSystemKind.Unknown"/> when it
    /// failed); see <see cref="KindOfType"/>.
    /// </summary>
    internal static FileSystemKind Ask(SafeFileHandle fd, bool readable)
    {
        // struct statfs: f_type is the first field (a long) on 64-bit Linux.
        byte* buffer = stackalloc byte[256];
        return Libc.FStatFs(fd, buffer) == 0 ? KindOfType(*(long*)buffer, fd, readable) : FileSystemKind.Unknown;
    }

    /// <summary>
    /// The kind of a file system of statfs's <paramref name="type"/>, which <paramref name="fd"/> is on. For one that is
    /// neither a local disk nor memory: <see cref="FileSystemKind.OtherBlocking"/> when it refuses non-blocking reads,
    /// known once per type by probing a <paramref name="readable"/> descriptor; <see cref="FileSystemKind.Other"/> when it
    /// reads without blocking, or when nobody could ask yet (a write-only descriptor cannot be probed).
    /// </summary>
    internal static FileSystemKind KindOfType(long type, SafeFileHandle fd, bool readable)
    {
        FileSystemKind kind = OpenedFile.KindOf(type);
        if (kind != FileSystemKind.Other)
        {
            return kind;
        }
        if (!RefusingTypes.TryGet(type, out bool refuses))
        {
            if (!readable)
            {
                return FileSystemKind.Other;
            }
            refuses = RefusesNonBlockingReads(fd);
            RefusingTypes.Add(type, refuses);
        }
        return refuses ? FileSystemKind.OtherBlocking : FileSystemKind.Other;
    }

    // Far beyond any file's end and any file system's largest file, so that a file system that does take the flag
    // returns 0 (or refuses the length for O_DIRECT) without reading anything; the offset plus the byte still fits a long.
    private const long ProbeOffset = long.MaxValue - 4095;

    /// <summary>
    /// Whether the file system of <paramref name="fd"/> (a regular file open for reading) refuses to start a read
    /// without blocking: <c>preadv2(RWF_NOWAIT)</c> of one byte far past the end fails with EOPNOTSUPP, the same
    /// test of the file (FMODE_NOWAIT) by which io_uring decides to hand each request to a kernel worker.
    /// </summary>
    internal static bool RefusesNonBlockingReads(SafeFileHandle fd)
    {
        byte probe;
        return Libc.PReadV2(fd, &probe, 1, ProbeOffset, LinuxConstants.RWF_NOWAIT) < 0 && Errno.Last == Errno.EOPNOTSUPP;
    }
}
