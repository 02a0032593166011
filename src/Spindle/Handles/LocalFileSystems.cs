using System.Collections.Concurrent;
using Spindle.Interop;

namespace Spindle.Handles;

/// <summary>
/// The kind of a file's file system (<see cref="FileSystemKind"/>): for a file system on a block device learned once per
/// device with one <c>fstatfs</c>, so that an open that already asked <c>fstat</c> knows it for a dictionary lookup; for
/// one on an anonymous device, whose number a later mount may reuse, one <c>fstatfs</c> per open.
/// </summary>
internal static unsafe class LocalFileSystems
{
    // st_dev → kind, for file systems on block devices: a block device's number stays with its file system while it is
    // mounted. Anonymous devices (major 0: tmpfs, FUSE, overlayfs, NFS, btrfs subvolumes) get the lowest free number
    // again after an unmount, so a later mount of another kind may have it: those are asked their type on every open
    // (one fstatfs) and only the kind of a (device, type) pair is kept, which a reused number cannot mislead.
    private static readonly ConcurrentDictionary<ulong, FileSystemKind> s_devices = new();
    private static readonly ConcurrentDictionary<(ulong Device, long Type), FileSystemKind> s_types = new();

    /// <summary>
    /// The kind of the file system of <paramref name="device"/>, which <paramref name="fd"/> (open for reading) is on
    /// (<see cref="FileSystemKind.Unknown"/> when fstatfs failed); for a file system that is neither a local disk nor
    /// memory, whether it reads without blocking too (<see cref="RefusesNonBlockingReads"/>).
    /// </summary>
    internal static FileSystemKind KindOf(ulong device, int fd)
    {
        bool anonymous = Major(device) == 0;
        if (!anonymous && s_devices.TryGetValue(device, out FileSystemKind kind))
        {
            return kind;
        }
        long type = FileSystemType(fd);
        if (type == 0)
        {
            return FileSystemKind.Unknown;
        }
        if (!s_types.TryGetValue((device, type), out kind))
        {
            kind = OpenedFile.KindOf(type);
            if (kind == FileSystemKind.Other && RefusesNonBlockingReads(fd))
            {
                kind = FileSystemKind.OtherBlocking;
            }
            s_types.TryAdd((device, type), kind);
        }
        if (!anonymous)
        {
            s_devices.TryAdd(device, kind);
        }
        return kind;
    }

    // The major number of a Linux st_dev (glibc's gnu_dev_major).
    private static uint Major(ulong device) => (uint)(((device >> 32) & 0xFFFFF000) | ((device >> 8) & 0xFFF));

    /// <summary>Whether the file system of <paramref name="device"/>, which <paramref name="fd"/> is on, is a local disk or memory one.</summary>
    internal static bool IsLocal(ulong device, int fd) => KindOf(device, fd) is FileSystemKind.LocalDisk or FileSystemKind.Memory;

    /// <summary>
    /// Whether the file system <paramref name="fd"/> is on is a local disk or memory one, whose close(2) does no I/O
    /// of its own (one fstatfs, not remembered); false for network and FUSE file systems and any not known.
    /// </summary>
    internal static bool IsLocal(int fd) => Ask(fd) is FileSystemKind.LocalDisk or FileSystemKind.Memory;

    // Far beyond any file's end and any file system's largest file, so that a file system that does take the flag
    // returns 0 (or refuses the length for O_DIRECT) without reading anything; the offset plus the byte still fits a long.
    private const long ProbeOffset = long.MaxValue - 4095;

    /// <summary>
    /// Whether the file system of <paramref name="fd"/> (a regular file open for reading) refuses to start a read
    /// without blocking: <c>preadv2(RWF_NOWAIT)</c> of one byte far past the end fails with EOPNOTSUPP, the same
    /// test of the file (FMODE_NOWAIT) by which io_uring decides to hand each request to a kernel worker.
    /// </summary>
    internal static bool RefusesNonBlockingReads(int fd)
    {
        byte probe;
        IoVector vector = new() { Base = &probe, Count = 1 };
        return Libc.PReadV2(fd, &vector, 1, ProbeOffset, LinuxConstants.RWF_NOWAIT) < 0 && Errno.Last == Errno.EOPNOTSUPP;
    }

    /// <summary>The kind of the file system <paramref name="fd"/> is on (one fstatfs, not remembered; <see cref="FileSystemKind.Unknown"/> when it failed).</summary>
    internal static FileSystemKind Ask(int fd)
    {
        long type = FileSystemType(fd);
        return type != 0 ? OpenedFile.KindOf(type) : FileSystemKind.Unknown;
    }

    // statfs's f_type (one fstatfs), 0 when it failed.
    private static long FileSystemType(int fd)
    {
        // struct statfs: f_type is the first field (a long) on 64-bit Linux.
        byte* buffer = stackalloc byte[256];
        return Libc.FStatFs(fd, buffer) == 0 ? *(long*)buffer : 0;
    }
}
