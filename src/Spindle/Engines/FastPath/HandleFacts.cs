using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Direct;
using Spindle.Handles;
using Spindle.Interop;
using Spindle.Syscalls;

namespace Spindle.Engines.FastPath;

/// <summary>
/// What the router and the fast paths need to know about a handle, learned once (beyond what Spindle's open learned)
/// and kept in a weak table so that it never keeps a handle alive.
/// </summary>
internal sealed class HandleFacts
{
    private const int AccessModeMask = 0x3;

    private static readonly ConditionalWeakTable<SafeFileHandle, HandleFacts> s_facts = new();

    /// <summary>A regular file without O_DIRECT: io_uring hands its buffered writes to its workers, one at a time per file (ext4).</summary>
    public bool BufferedFile;

    /// <summary>A regular file without O_DIRECT whose file system accepts RWF_NOWAIT reads (as far as known).</summary>
    public volatile bool NonBlockingReads;

    /// <summary>A writable regular file without O_DIRECT or O_SYNC on a local disk or memory file system: a buffered write is a copy.</summary>
    public bool CachedWrites;

    /// <summary>A character device (<c>/dev/zero</c>, a terminal): its driver may return less when asked not to block.</summary>
    public bool CharacterDevice;

    /// <summary>Anything but a regular file, block device or directory (a pipe, socket, device, anon inode): an operation may wait for ever.</summary>
    public bool MayBlockIndefinitely;

    /// <summary>
    /// Storage the kernel reads and writes synchronously in the calling thread, where io_uring would hand each request to
    /// a worker: a file on tmpfs or ramfs (which refuse RWF_NOWAIT), an O_DIRECT file on a RAM block device, or one itself.
    /// </summary>
    public bool SynchronousBackend;

    /// <summary>A regular file on tmpfs or ramfs: nothing to write back, so a flush or data sync returns at once.</summary>
    public bool MemoryFileSystem;

    /// <summary>
    /// A regular file whose file system refuses RWF_NOWAIT (FUSE, overlayfs): io_uring hands each request to a kernel
    /// worker. Also a write-only handle on a file system neither local nor memory, which a probing read cannot ask.
    /// </summary>
    public bool RefusesNonBlockingIo;

    /// <summary>The kind of file system a regular file is on (<see cref="FileSystemKind.Unknown"/> for anything else, or when not asked).</summary>
    public FileSystemKind FileSystem;

    /// <summary>An epoll descriptor: read(2) and write(2) fail with EINVAL at once, while io_uring never completes them.</summary>
    public bool FailsAtOnce;

    /// <summary>Opened with O_NONBLOCK: a read or write that would wait fails with EAGAIN at once instead.</summary>
    public bool NonBlocking;

    /// <summary>An <c>O_PATH</c> descriptor: it names a file but reads, writes and seeks nothing.</summary>
    public bool PathOnly;

    /// <summary>For a handle Spindle opened with O_DIRECT, the alignment every call must respect (<see cref="DirectHandles"/>); else zero.</summary>
    public DirectIOAlignment DirectAlignment;

    /// <summary>How many system calls learning these facts took (what the handle's open knew cost none).</summary>
    public int SystemCalls;

    /// <summary>The facts of a handle, learned on its first call; called where a raw handle enters Spindle.</summary>
    internal static HandleFacts Of(SafeFileHandle handle)
    {
        // The thread's last handle first: one file's reads come one after another, and the weak table's lookup costs
        // more than the rest of a cached read's way to its system call.
        if (t_last is { } last && last._owner!.TryGetTarget(out SafeFileHandle? owner) && ReferenceEquals(owner, handle))
        {
            return last;
        }
        HandleFacts facts = s_facts.GetValue(handle, Probe); // a static method group: the compiler caches its delegate
        facts._owner ??= new WeakReference<SafeFileHandle>(handle);
        t_last = facts;
        return facts;
    }

    // The facts this thread looked up last, and the handle they belong to (weakly: the cache keeps no handle alive).
    [ThreadStatic]
    private static HandleFacts? t_last;

    private WeakReference<SafeFileHandle>? _owner;

    /// <summary>The facts of a handle Spindle opened, asking the kernel only what <paramref name="opened"/> does not say.</summary>
    internal static HandleFacts Of(SafeFileHandle handle, in OpenedFile opened)
    {
        if (s_facts.TryGetValue(handle, out HandleFacts? facts))
        {
            return facts;
        }
        facts = Learn(handle, opened);
        // Another thread's first operation may have won the race: its facts are the same, and stay.
        return s_facts.TryAdd(handle, facts) ? facts : Of(handle);
    }

    /// <summary>Whether the handle's facts have been learned (tests).</summary>
    internal static bool IsKnown(SafeFileHandle handle) => s_facts.TryGetValue(handle, out _);

    /// <summary>Forgets the handle's facts (tests: a later lookup shows by learning them again).</summary>
    internal static void Forget(SafeFileHandle handle)
    {
        if (s_facts.TryGetValue(handle, out HandleFacts? facts))
        {
            facts._owner?.SetTarget(null!); // no thread's last lookup matches them any more
            s_facts.Remove(handle);
        }
    }

    /// <summary>Learns the facts of a handle from the kernel alone (not cached).</summary>
    internal static HandleFacts Probe(SafeFileHandle handle) => Learn(handle, OpenedFile.Unknown);

    private static unsafe HandleFacts Learn(SafeFileHandle handle, in OpenedFile opened)
    {
        var facts = new HandleFacts();
        if (DirectHandles.Any)
        {
            DirectHandles.TryGet(handle, out facts.DirectAlignment);
        }
        try
        {
            int flags = opened.Flags;
            if (!opened.IsKnown)
            {
                flags = Libc.Fcntl(handle, LinuxConstants.F_GETFL, 0);
                facts.SystemCalls++;
            }
            int type = opened.FileType;
            StatxBuffer status = default;
            bool haveStatus = type == 0 && Stat(handle, facts, &status);
            type = haveStatus ? status.Mode & LinuxConstants.S_IFMT : type;
            // No file type at all: an anonymous inode (eventfd, timerfd, signalfd, inotify, epoll).
            bool anonymous = haveStatus && type == 0;
            facts.CharacterDevice = type == LinuxConstants.S_IFCHR;
            facts.NonBlocking = flags >= 0 && (flags & OpenFlags.O_NONBLOCK) != 0;
            facts.PathOnly = flags >= 0 && (flags & OpenFlags.O_PATH) != 0;
            facts.MayBlockIndefinitely = type is not (LinuxConstants.S_IFREG or LinuxConstants.S_IFBLK or LinuxConstants.S_IFDIR);
            facts.FailsAtOnce = anonymous && StorageBackends.IsEpoll(HandleIo.Fd(handle));
            bool direct = flags >= 0 && (flags & OpenFlags.O_DIRECT) != 0;
            if (type == LinuxConstants.S_IFBLK)
            {
                facts.SynchronousBackend = (haveStatus || Stat(handle, facts, &status))
                    && StorageBackends.IsRamBlockDevice(status.SpecialMajor, status.SpecialMinor);
            }
            else if (type == LinuxConstants.S_IFREG)
            {
                bool readable = flags >= 0 && (flags & AccessModeMask) != OpenFlags.O_WRONLY;
                FileSystemKind fileSystem = opened.FileSystem;
                if (fileSystem == FileSystemKind.Unknown)
                {
                    fileSystem = LocalFileSystems.Ask(handle, readable); // and, once per file-system type, whether it reads without blocking
                    facts.SystemCalls++;
                }
                facts.FileSystem = fileSystem;
                facts.MemoryFileSystem = fileSystem == FileSystemKind.Memory;
                facts.SynchronousBackend = facts.MemoryFileSystem;
                if (direct && !facts.SynchronousBackend)
                {
                    // An O_DIRECT file on a RAM block device (ext4 on zram); buffered reads there are page-cache hits.
                    facts.SynchronousBackend = (haveStatus || Stat(handle, facts, &status))
                        && StorageBackends.IsRamBlockDevice(status.DeviceMajor, status.DeviceMinor);
                }
                facts.RefusesNonBlockingIo = fileSystem == FileSystemKind.OtherBlocking || fileSystem == FileSystemKind.Other && !readable;
                // O_DIRECT reads with RWF_NOWAIT still wait for the device, on the caller's thread.
                bool cached = flags >= 0 && !direct;
                facts.NonBlockingReads = cached && !facts.SynchronousBackend && !facts.RefusesNonBlockingIo;
                facts.BufferedFile = cached;
                // O_SYNC and O_DSYNC (both carry the O_DSYNC bit) make every write wait for the device.
                if (cached && (flags & OpenedFile.OpenDsyncFlag) == 0 && (flags & AccessModeMask) != OpenFlags.O_RDONLY)
                {
                    facts.CachedWrites = LocalFileSystems.IsLocal(fileSystem);
                }
            }
        }
        catch (ObjectDisposedException)
        {
        }
        return facts;
    }

    // The handle's statx (its type and device numbers), counted in SystemCalls.
    private static unsafe bool Stat(SafeFileHandle handle, HandleFacts facts, StatxBuffer* status)
    {
        bool known = Libc.Statx(handle, string.Empty, LinuxConstants.AT_EMPTY_PATH, LinuxConstants.STATX_TYPE, status) == 0;
        facts.SystemCalls++;
        return known;
    }
}

/// <summary>The facts of a batch's members' handles, looked up once per run of the same handle: members mostly share one.</summary>
internal struct HandleFactsOfRun
{
    private SafeFileHandle? _handle;
    private HandleFacts? _facts;

    /// <summary>The facts of <paramref name="handle"/>: those of the previous call when it is the same handle.</summary>
    internal HandleFacts Of(SafeFileHandle handle)
    {
        if (!ReferenceEquals(handle, _handle))
        {
            _facts = HandleFacts.Of(handle);
            _handle = handle;
        }
        return _facts!;
    }
}
