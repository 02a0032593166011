using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Interop;
using Spindle.RandomAccess;

namespace Spindle.Engines.FastPath;

/// <summary>
/// What the fast paths need to know about a handle, learned once (two system calls) and kept in a
/// weak table so that it never keeps a handle alive.
/// </summary>
internal sealed class HandleFacts
{
    // f_type of the local file systems whose buffered writes only copy into the page cache.
    private const long Ext4Magic = 0xEF53;
    private const long XfsMagic = 0x58465342;
    private const long BtrfsMagic = 0x9123683E;
    private const long TmpfsMagic = 0x01021994;
    private const long F2fsMagic = 0xF2F52010;

    private const int DsyncBit = 0x1000;

    private static readonly ConditionalWeakTable<SafeFileHandle, HandleFacts> s_facts = new();
    private static readonly ConditionalWeakTable<SafeFileHandle, HandleFacts>.CreateValueCallback s_probe = Probe;

    /// <summary>
    /// A regular file without O_DIRECT: its writes go through the page cache, which io_uring cannot do
    /// without blocking on most file systems (ext4), so it hands them to its workers, one at a time per file.
    /// </summary>
    public bool BufferedFile;

    /// <summary>A regular file without O_DIRECT whose file system accepts RWF_NOWAIT reads (as far as known).</summary>
    public volatile bool NonBlockingReads;

    /// <summary>A regular file without O_DIRECT or O_SYNC on a local disk or memory file system: a buffered write is a copy.</summary>
    public bool CachedWrites;

    /// <summary>A character device (<c>/dev/zero</c>, a terminal): its driver may return less when asked not to block.</summary>
    public bool CharacterDevice;

    /// <summary>
    /// A pipe, socket or character device: a read or write may wait for ever (for a peer, a terminal),
    /// unlike regular files and block devices, whose operations always finish.
    /// </summary>
    public bool MayBlockIndefinitely;

    internal static HandleFacts Of(SafeFileHandle handle) => s_facts.GetValue(handle, s_probe);

    /// <summary>Whether an operation on the handle may wait for ever (see <see cref="MayBlockIndefinitely"/>).</summary>
    internal static bool MayBlock(SafeFileHandle handle) => Of(handle).MayBlockIndefinitely;

    private static unsafe HandleFacts Probe(SafeFileHandle handle)
    {
        var facts = new HandleFacts();
        bool added = false;
        try
        {
            handle.DangerousAddRef(ref added);
            int fd = HandleIo.Fd(handle);
            StatxBuffer status;
            int flags = Libc.Fcntl(fd, LinuxConstants.F_GETFL, 0);
            int type = Libc.Statx(fd, string.Empty, LinuxConstants.AT_EMPTY_PATH, LinuxConstants.STATX_TYPE, &status) == 0
                ? status.Mode & LinuxConstants.S_IFMT
                : 0;
            facts.CharacterDevice = type == LinuxConstants.S_IFCHR;
            facts.MayBlockIndefinitely = type is LinuxConstants.S_IFIFO or LinuxConstants.S_IFSOCK or LinuxConstants.S_IFCHR;
            // O_DIRECT reads with RWF_NOWAIT still wait for the device, on the caller's thread.
            bool cached = flags >= 0 && (flags & OpenFlags.O_DIRECT) == 0 && type == LinuxConstants.S_IFREG;
            facts.NonBlockingReads = cached;
            facts.BufferedFile = cached;
            // O_SYNC and O_DSYNC (both carry the O_DSYNC bit) make every write wait for the device.
            if (cached && (flags & DsyncBit) == 0)
            {
                // struct statfs: f_type is the first field (a long) on 64-bit Linux.
                byte* buffer = stackalloc byte[256];
                facts.CachedWrites = Libc.FStatFs(fd, buffer) == 0 && (long)*(ulong*)buffer is Ext4Magic or XfsMagic or BtrfsMagic or TmpfsMagic or F2fsMagic;
            }
        }
        catch (ObjectDisposedException)
        {
        }
        finally
        {
            if (added)
            {
                handle.DangerousRelease();
            }
        }
        return facts;
    }
}
