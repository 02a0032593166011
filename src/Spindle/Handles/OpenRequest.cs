using Spindle.Interop;

namespace Spindle.Handles;

/// <summary>
/// An open decided before <c>open(2)</c> (<see cref="FileOpener.Prepare"/>): the arguments, validated, and what
/// they mean to the kernel. The synchronous and the asynchronous open carry the same request through the same steps.
/// </summary>
internal struct OpenRequest
{
    internal OpenRequest(string fullPath, FileMode mode, FileAccess access, FileShare share, FileOptions options, long preallocationSize,
        int flags, int permissions, Direct.DirectOpen direct)
    {
        FullPath = fullPath;
        Mode = mode;
        Access = access;
        Share = share;
        Options = options;
        PreallocationSize = preallocationSize;
        Flags = flags;
        Permissions = permissions;
        Direct = direct;
    }

    internal readonly string FullPath;
    internal readonly FileMode Mode;
    internal readonly FileAccess Access;
    internal readonly FileShare Share;
    internal readonly FileOptions Options;
    internal readonly long PreallocationSize;
    internal int Flags;                        // for open(2); loses O_DIRECT when a refusal falls back to buffered I/O
    internal readonly int Permissions;         // of a created file, before the umask
    internal readonly Direct.DirectOpen Direct; // what an O_DIRECT refusal must undo

    /// <summary>
    /// Set by an open that may not have waited where <c>open(2)</c> waits: io_uring first tries an open without
    /// waiting (O_NONBLOCK), which returns a FIFO's read end before a writer came. Such a FIFO or device is
    /// then opened again the blocking way (<see cref="FinishResult.OpenBlocking"/>).
    /// </summary>
    internal bool MayNotHaveWaited;

    /// <summary>
    /// Set by the content methods (<c>SpindleFile.ReadAllBytesAsync</c> and the like), whose handle lives for one call
    /// and is never handed out: its close alone releases the <c>flock</c> (no <c>LOCK_UN</c> first), and an open from
    /// the lookup cache may leave O_NONBLOCK on for the cached read (<see cref="OpenedHandle.PendingStatusFlags"/>).
    /// </summary>
    internal bool ForOneCall;

    /// <summary>
    /// After a preallocation failure (<see cref="FinishResult.NoSpace"/>, <see cref="FinishResult.TooLarge"/>) and the
    /// file's close: removes the file, as System.IO does, and returns the exception to throw.
    /// </summary>
    internal readonly IOException RemoveAfterPreallocationFailure(FinishResult result)
    {
        Libc.Unlink(FullPath);
        // System.IO leaves HResult at its default here (not the errno); the message names the cause.
        return new IOException(result == FinishResult.TooLarge
            ? $"Failed to create '{FullPath}' with allocation size '{PreallocationSize}' because the file was too large."
            : $"Failed to create '{FullPath}' with allocation size '{PreallocationSize}' because the disk was full.");
    }
}

/// <summary>How the steps after <c>open(2)</c> ended (<see cref="FileOpener.Finish"/>), when they did not throw.</summary>
internal enum FinishResult : byte
{
    /// <summary>The handle is ready.</summary>
    Opened,

    /// <summary>The path names another file now (a lock file replaced while we waited for its lock): close, open again.</summary>
    OpenAgain,

    /// <summary>A FIFO or a character device opened without waiting (<see cref="OpenRequest.MayNotHaveWaited"/>): close, open it the blocking way.</summary>
    OpenBlocking,

    /// <summary>Preallocation found no space: close, remove the file, throw.</summary>
    NoSpace,

    /// <summary>Preallocation found the size too large: close, remove the file, throw.</summary>
    TooLarge,
}
