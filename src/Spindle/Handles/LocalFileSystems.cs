using System.Collections.Concurrent;
using Spindle.Interop;

namespace Spindle.Handles;

/// <summary>
/// The kind of a file's file system (<see cref="FileSystemKind"/>), learned once per device with one <c>fstatfs</c>,
/// so that an open that already asked <c>fstat</c> knows it for a dictionary lookup.
/// </summary>
internal static unsafe class LocalFileSystems
{
    // st_dev → kind. A device number names one mounted file system while it is mounted; one reused by a later
    // mount can only misplace an operation (ring, pool or caller's thread), never change a result.
    private static readonly ConcurrentDictionary<ulong, FileSystemKind> s_devices = new();

    /// <summary>
    /// The kind of the file system of <paramref name="device"/>, which <paramref name="fd"/> (open for reading) is on
    /// (<see cref="FileSystemKind.Unknown"/> when fstatfs failed); for a file system that is neither a local disk nor
    /// memory, whether it reads without blocking too (<see cref="RefusesNonBlockingReads"/>).
    /// </summary>
    internal static FileSystemKind KindOf(ulong device, int fd)
    {
        if (s_devices.TryGetValue(device, out FileSystemKind kind))
        {
            return kind;
        }
        kind = Ask(fd);
        if (kind == FileSystemKind.Other && RefusesNonBlockingReads(fd))
        {
            kind = FileSystemKind.OtherBlocking;
        }
        if (kind != FileSystemKind.Unknown)
        {
            s_devices.TryAdd(device, kind);
        }
        return kind;
    }

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
        // struct statfs: f_type is the first field (a long) on 64-bit Linux.
        byte* buffer = stackalloc byte[256];
        return Libc.FStatFs(fd, buffer) == 0 ? OpenedFile.KindOf(*(long*)buffer) : FileSystemKind.Unknown;
    }
}
