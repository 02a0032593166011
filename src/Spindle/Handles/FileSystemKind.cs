namespace Spindle.Handles;

/// <summary>
/// What kind of file system a file is on, as far as where its I/O should run is concerned (from statfs's
/// <c>f_type</c>): each kind behaves differently on io_uring.
/// </summary>
internal enum FileSystemKind : byte
{
    /// <summary>Not learned.</summary>
    Unknown,

    /// <summary>
    /// ext4, xfs, btrfs, f2fs: a buffered write is a copy into the page cache, <c>close(2)</c> does no I/O, and
    /// reads and writes can start without blocking (<c>RWF_NOWAIT</c>), so io_uring runs them without a worker.
    /// </summary>
    LocalDisk,

    /// <summary>
    /// tmpfs, ramfs: every read and write is a copy the kernel makes in the calling thread. They refuse
    /// <c>RWF_NOWAIT</c> (Linux 6.18), so io_uring hands each one to a worker; a system call on the caller's
    /// thread is the fastest way.
    /// </summary>
    Memory,

    /// <summary>
    /// Any other that reads without blocking (asked once per file-system type), or whose answer nobody could ask yet (a
    /// write-only descriptor cannot probe it); a close may wait.
    /// </summary>
    Other,

    /// <summary>
    /// Another file system that refuses to start a read without blocking (FUSE, overlayfs: <c>RWF_NOWAIT</c> fails with
    /// EOPNOTSUPP; asked once per file-system type): io_uring hands each of its requests to a kernel worker.
    /// </summary>
    OtherBlocking,
}
