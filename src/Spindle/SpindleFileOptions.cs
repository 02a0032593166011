using System.Runtime.Versioning;

namespace Spindle;

/// <summary>
/// Options for opening a file with Spindle: the members of <see cref="FileStreamOptions"/> with the
/// same defaults and validation, plus Spindle's own (<see cref="Engine"/>).
/// </summary>
/// <remarks>
/// Defaults: <see cref="FileMode.Open"/>, <see cref="FileAccess.Read"/>, <see cref="FileShare.Read"/>,
/// <see cref="FileOptions.None"/>, a 4096-byte buffer, no preallocation, <c>0666 &amp; ~umask</c> for new
/// files, and <see cref="IoEngine.Auto"/>.
/// </remarks>
public sealed class SpindleFileOptions
{
    // Every FileOptions flag System.IO accepts, including NoBuffering (0x20000000) and, since .NET 10,
    // BackupSemantics (0x02000000), which it allows but ignores on Unix.
    internal const FileOptions ValidFileOptions = FileOptions.WriteThrough | FileOptions.Asynchronous | FileOptions.RandomAccess
        | FileOptions.DeleteOnClose | FileOptions.SequentialScan | FileOptions.Encrypted | NoBuffering | BackupSemantics;

    /// <summary>The flag of <c>FILE_FLAG_NO_BUFFERING</c>, which System.IO accepts in <see cref="FileOptions"/>.</summary>
    internal const FileOptions NoBuffering = (FileOptions)0x20000000;

    /// <summary>The flag of <c>FILE_FLAG_BACKUP_SEMANTICS</c>, which System.IO accepts in <see cref="FileOptions"/>.</summary>
    internal const FileOptions BackupSemantics = (FileOptions)0x02000000;

    internal const UnixFileMode AllPermissions = (UnixFileMode)0xFFF;
    internal const int DefaultBufferSize = 4096;

    private FileMode _mode = FileMode.Open;
    private FileAccess _access = FileAccess.Read;
    private FileShare _share = FileShare.Read;
    private FileOptions _options;
    private long _preallocationSize;
    private int _bufferSize = DefaultBufferSize;
    private UnixFileMode? _unixCreateMode;
    private IoEngine _engine;

    /// <summary>Creates options with the defaults described on the type.</summary>
    public SpindleFileOptions()
    {
    }

    /// <summary>Creates options with the values of a <see cref="FileStreamOptions"/>, for code moving from System.IO.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="options"/> is null.</exception>
    public SpindleFileOptions(FileStreamOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        Mode = options.Mode;
        Access = options.Access;
        Share = options.Share;
        Options = options.Options;
        PreallocationSize = options.PreallocationSize;
        BufferSize = options.BufferSize;
        UnixCreateMode = options.UnixCreateMode;
    }

    /// <summary>How the operating system opens the file. Default: <see cref="FileMode.Open"/>.</summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is not a defined <see cref="FileMode"/>.</exception>
    public FileMode Mode
    {
        get => _mode;
        set
        {
            if (value < FileMode.CreateNew || value > FileMode.Append)
            {
                ThrowHelper.ThrowEnumOutOfRange(nameof(value));
            }
            _mode = value;
        }
    }

    /// <summary>How the file can be accessed. Default: <see cref="FileAccess.Read"/>.</summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is not a defined <see cref="FileAccess"/>.</exception>
    public FileAccess Access
    {
        get => _access;
        set
        {
            if (value < FileAccess.Read || value > FileAccess.ReadWrite)
            {
                ThrowHelper.ThrowEnumOutOfRange(nameof(value));
            }
            _access = value;
        }
    }

    /// <summary>The access other handles may have to the file (emulated with advisory <c>flock</c>). Default: <see cref="FileShare.Read"/>.</summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is not a valid <see cref="FileShare"/> combination.</exception>
    public FileShare Share
    {
        get => _share;
        set
        {
            FileShare withoutInheritable = value & ~FileShare.Inheritable;
            if (withoutInheritable < FileShare.None || withoutInheritable > (FileShare.ReadWrite | FileShare.Delete))
            {
                ThrowHelper.ThrowEnumOutOfRange(nameof(value));
            }
            _share = value;
        }
    }

    /// <summary>Advanced options. Default: <see cref="FileOptions.None"/>.</summary>
    /// <exception cref="ArgumentOutOfRangeException">The value contains an undefined flag.</exception>
    public FileOptions Options
    {
        get => _options;
        set
        {
            if (value != FileOptions.None && (value & ~ValidFileOptions) != 0)
            {
                ThrowHelper.ThrowEnumOutOfRange(nameof(value));
            }
            _options = value;
        }
    }

    /// <summary>
    /// The initial allocation size in bytes for a file that is created or overwritten; a hint that
    /// only fails the open when the disk is full or the file would be too large. Default: 0.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is negative.</exception>
    public long PreallocationSize
    {
        get => _preallocationSize;
        set
        {
            if (value < 0)
            {
                ThrowHelper.ThrowNeedNonNegative(nameof(value));
            }
            _preallocationSize = value;
        }
    }

    /// <summary>
    /// The size of a stream's buffer in bytes; 0 or 1 disables buffering. Default: 4096. Ignored by
    /// <see cref="SpindleFile.OpenHandle(string, SpindleFileOptions)"/>.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is negative.</exception>
    public int BufferSize
    {
        get => _bufferSize;
        set
        {
            if (value < 0)
            {
                ThrowHelper.ThrowNeedNonNegative(nameof(value));
            }
            _bufferSize = value;
        }
    }

    /// <summary>
    /// The permissions of a newly created file (the process umask still applies), or null for
    /// <c>0666 &amp; ~umask</c>. Only valid with a <see cref="Mode"/> that can create a file.
    /// </summary>
    /// <exception cref="ArgumentException">The value has bits beyond the twelve permission bits.</exception>
    public UnixFileMode? UnixCreateMode
    {
        get => _unixCreateMode;
        set
        {
            if (value.HasValue && (value.Value & ~AllPermissions) != 0)
            {
                // The parameter name is System.IO's.
                throw new ArgumentException("Invalid UnixFileMode value.", nameof(UnixCreateMode));
            }
            _unixCreateMode = value;
        }
    }

    /// <summary>The engine for asynchronous operations on this file. Default: <see cref="IoEngine.Auto"/>.</summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is not a defined <see cref="IoEngine"/>.</exception>
    public IoEngine Engine
    {
        get => _engine;
        set
        {
            if (value < IoEngine.Auto || value > IoEngine.IoUring)
            {
                ThrowHelper.ThrowEnumOutOfRange(nameof(value));
            }
            _engine = value;
        }
    }

    /// <summary>
    /// Whether asynchronous reads first try to copy already-cached pages on the caller's thread
    /// (<c>preadv2</c> with <c>RWF_NOWAIT</c>) before going to the engine; results are the same either
    /// way. Default: true. The AppContext switch <c>Spindle.DisableReadFastPath</c> turns it off for
    /// the whole process.
    /// </summary>
    public bool ReadFastPath { get; set; } = true;

    /// <summary>
    /// Unbuffered I/O: the file is opened with <c>O_DIRECT</c>, so reads and writes bypass the page cache
    /// (as <c>(FileOptions)0x20000000</c>, <c>FILE_FLAG_NO_BUFFERING</c>, also requests). Default: false.
    /// </summary>
    /// <remarks>
    /// Every <see cref="SpindleRandomAccess"/> call on such a handle must use a file offset and lengths that
    /// are multiples of the file's <see cref="DirectIOAlignment.OffsetAlignment"/> and buffers whose
    /// addresses are multiples of <see cref="DirectIOAlignment.MemoryAlignment"/>
    /// (<see cref="SpindleFile.GetDirectIOAlignment"/>; <see cref="AlignedMemoryPool"/> rents such buffers);
    /// a misaligned call throws <see cref="ArgumentException"/> before anything reaches the kernel.
    /// A <see cref="SpindleFileStream"/> accepts any sizes and positions: its buffer is aligned memory and it
    /// only ever reads and writes whole blocks, fixing the length with <c>ftruncate</c> after a padded last block.
    /// A file system that refuses <c>O_DIRECT</c> (ramfs, procfs, some FUSE) makes the open throw
    /// <see cref="IOException"/>, unless <see cref="DirectIOFallback"/> is set.
    /// Linux only: elsewhere opening throws <see cref="PlatformNotSupportedException"/>, or with
    /// <see cref="DirectIOFallback"/> opens buffered and counts the fallback.
    /// </remarks>
    public bool DirectIO { get; [SupportedOSPlatform("linux")] set; }

    /// <summary>
    /// Where the file system refuses <c>O_DIRECT</c>, open the file with ordinary buffered I/O instead of
    /// throwing. The fallback is visible: <see cref="SpindleFile.IsDirectIO"/> returns false and the
    /// <c>spindle.engine.fallbacks</c> counter grows. Only meaningful with <see cref="DirectIO"/> or
    /// <c>FILE_FLAG_NO_BUFFERING</c>. Default: false.
    /// </summary>
    public bool DirectIOFallback { get; set; }

    /// <summary>
    /// Atomic append: the file is opened with <c>O_APPEND</c>, so every write lands at the end of the file as
    /// one atomic step, even with several writers in several processes. Requires write access and cannot be
    /// combined with <see cref="DirectIO"/> (opening throws <see cref="ArgumentException"/>). Default: false.
    /// </summary>
    /// <remarks>
    /// <para>With a handle, <see cref="SpindleRandomAccess"/> writes ignore their file offset (as <c>pwrite</c>
    /// does on Linux for <c>O_APPEND</c>): each lands at the end of the file at the moment it is made.
    /// Reads use their offsets as usual.</para>
    /// <para>With a <see cref="SpindleFileStream"/>, <c>Seek</c> and <c>Position</c> work and position reads; a
    /// write always lands at the end of the file whatever the position, and afterwards the position is where
    /// that write ended (the file's length at that moment). The stream hands each flush of its buffer to the
    /// kernel as one <c>write(2)</c> and never splits a write that fits in its buffer, so records up to the
    /// buffer size never interleave with other writers' while their writers live. Reading <c>Position</c> or
    /// <c>Length</c> flushes the buffer, so that both are exact.</para>
    /// <para>The kernel places each <c>write(2)</c> whole at the end of the file, but does not promise that a
    /// call finishes: a writer killed in the middle of a large write, or one that meets a full disk, leaves
    /// a torn record that other writers' records then follow. <see cref="AppendLog"/> frames records with a
    /// length and a checksum so that a reader skips such a record and keeps every other.</para>
    /// <para>Linux only: elsewhere opening throws <see cref="PlatformNotSupportedException"/>.</para>
    /// </remarks>
    public bool AtomicAppend { get; [SupportedOSPlatform("linux")] set; }
}
