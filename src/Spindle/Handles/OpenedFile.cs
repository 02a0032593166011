using Spindle.Interop;

namespace Spindle.Handles;

/// <summary>
/// What opening a file learned about it on the way: the flags open(2) was given, the file type (from the
/// directory check of a read-only open, or a successful truncation) and the kind of its file system (from the
/// lock decision's statfs, or a reader's device). A stream hands it to
/// <see cref="Engines.FastPath.HandleFacts"/> at its first asynchronous operation, so that the engines do
/// not ask the kernel again what the open already knew.
/// </summary>
/// <remarks>Sixteen bits, which fit in the padding of a stream's OS layer: keeping it costs no allocated byte.</remarks>
internal readonly struct OpenedFile
{
    private const int AccessModeBits = 0x3;    // O_ACCMODE
    private const int DirectBit = 0x4;         // O_DIRECT
    private const int DsyncBit = 0x8;          // O_DSYNC, also part of O_SYNC
    private const int TypeShift = 4;           // S_IFMT >> 12 in bits 4-7, 0 when not learned
    private const int LocalFileSystemBit = 0x100;
    private const int OtherFileSystemBit = 0x200;
    private const int LearnedBit = 0x400;
    private const int MemoryFileSystemBit = 0x800; // with LocalFileSystemBit: tmpfs, ramfs
    private const int BlockingFileSystemBit = 0x2000; // with OtherFileSystemBit: refuses non-blocking reads (FUSE, overlayfs)

    internal const int OpenDsyncFlag = 0x1000;

    private readonly ushort _bits;

    private OpenedFile(int bits) => _bits = (ushort)bits;

    /// <summary>Nothing learned: every fact is asked of the kernel (a handle opened elsewhere).</summary>
    internal static OpenedFile Unknown => default;

    /// <summary>What the flags given to open(2) say (after any O_DIRECT fallback).</summary>
    internal static OpenedFile FromFlags(int flags) => new(LearnedBit | (flags & AccessModeBits)
        | ((flags & OpenFlags.O_DIRECT) != 0 ? DirectBit : 0) | ((flags & OpenDsyncFlag) != 0 ? DsyncBit : 0));

    /// <summary>This and the file's type (its S_IFMT bits).</summary>
    internal OpenedFile WithFileType(int fileType) => new((_bits & ~(0xF << TypeShift)) | (((fileType & LinuxConstants.S_IFMT) >> 12) << TypeShift));

    /// <summary>This and the kind of the file's file system (nothing changes for <see cref="FileSystemKind.Unknown"/>).</summary>
    internal OpenedFile WithFileSystem(FileSystemKind kind) => new(_bits | kind switch
    {
        FileSystemKind.LocalDisk => LocalFileSystemBit,
        FileSystemKind.Memory => LocalFileSystemBit | MemoryFileSystemBit,
        FileSystemKind.Other => OtherFileSystemBit,
        FileSystemKind.OtherBlocking => OtherFileSystemBit | BlockingFileSystemBit,
        _ => 0,
    });

    // statfs's f_type of the file systems Spindle tells apart.
    private const long Ext4Magic = 0xEF53;
    private const long XfsMagic = 0x58465342;
    private const long BtrfsMagic = 0x9123683E;
    private const long F2fsMagic = 0xF2F52010;
    private const long TmpfsMagic = 0x01021994;
    private const long RamfsMagic = 0x858458F6;

    /// <summary>The kind of the file system of statfs's <paramref name="fileSystemType"/>.</summary>
    internal static FileSystemKind KindOf(long fileSystemType) => fileSystemType switch
    {
        Ext4Magic or XfsMagic or BtrfsMagic or F2fsMagic => FileSystemKind.LocalDisk,
        TmpfsMagic or RamfsMagic => FileSystemKind.Memory,
        _ => FileSystemKind.Other,
    };

    /// <summary>Whether the open learned anything.</summary>
    internal bool IsKnown => (_bits & LearnedBit) != 0;

    /// <summary>The open(2) flags the facts depend on (access mode, O_DIRECT, O_DSYNC); meaningful when <see cref="IsKnown"/>.</summary>
    internal int Flags => (_bits & AccessModeBits) | ((_bits & DirectBit) != 0 ? OpenFlags.O_DIRECT : 0) | ((_bits & DsyncBit) != 0 ? OpenDsyncFlag : 0);

    /// <summary>The S_IFMT bits of the file, or 0 when the open did not learn them.</summary>
    internal int FileType => ((_bits >> TypeShift) & 0xF) << 12;

    /// <summary>Whether buffered writes on the file system are page-cache copies, or null when the open did not ask.</summary>
    internal bool? WritesAreCopies => (_bits & LocalFileSystemBit) != 0 ? true : (_bits & OtherFileSystemBit) != 0 ? false : null;

    /// <summary>The kind of the file's file system, or <see cref="FileSystemKind.Unknown"/> when the open did not ask.</summary>
    internal FileSystemKind FileSystem
        => (_bits & MemoryFileSystemBit) != 0 ? FileSystemKind.Memory
        : (_bits & LocalFileSystemBit) != 0 ? FileSystemKind.LocalDisk
        : (_bits & BlockingFileSystemBit) != 0 ? FileSystemKind.OtherBlocking
        : (_bits & OtherFileSystemBit) != 0 ? FileSystemKind.Other
        : FileSystemKind.Unknown;
}
