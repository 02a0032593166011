namespace Spindle;

/// <summary>How Spindle performs asynchronous file I/O.</summary>
public enum IoEngine
{
    /// <summary>
    /// The process-wide default: the engine named by the <c>Spindle.IoEngine</c> AppContext switch or
    /// the <c>SPINDLE_IO_ENGINE</c> environment variable, else io_uring when the kernel allows it,
    /// else <see cref="ThreadPool"/>.
    /// </summary>
    Auto = 0,

    /// <summary>Blocking system calls on the calling thread; asynchronous calls complete synchronously.</summary>
    /// <remarks>
    /// Except on pipes, sockets and character devices, where a call may wait for ever (for the write
    /// the same caller would make next): there the call runs as on <see cref="ThreadPool"/>, on a
    /// thread of its own, and the task completes when the call returns.
    /// </remarks>
    Sync = 1,

    /// <summary>What .NET does on Unix: the blocking system call runs on a thread-pool thread.</summary>
    /// <remarks>
    /// Queued like System.IO's, so that pool threads blocked on results (sync-over-async) do not
    /// starve it. Calls on pipes, sockets and character devices, which may wait for ever, run on
    /// threads of their own outside the pool, so they never hold a pool thread that other I/O needs.
    /// </remarks>
    ThreadPool = 2,

    /// <summary>Linux io_uring: operations are submitted to the kernel and complete without a blocked thread.</summary>
    /// <remarks>
    /// Continuations run on Spindle's own completion threads (more are added when one blocks), so a
    /// completion never waits for a free pool thread. Operations on pipes, sockets and character
    /// devices, which may wait for ever, have half the ring's room and a queue of their own, so they
    /// never hold up file operations; a queued operation whose token is cancelled completes at once.
    /// Where the kernel refuses io_uring, a request for this engine runs on <see cref="ThreadPool"/>
    /// (see <see cref="SpindleRandomAccess.IsIoUringAvailable"/>). On this engine and on
    /// <see cref="ThreadPool"/>, reads of cached pages and small writes to cached local files
    /// complete on the caller's thread (the fast paths; switches <c>Spindle.DisableReadFastPath</c>
    /// and <c>Spindle.DisableWriteFastPath</c>).
    /// </remarks>
    IoUring = 3,
}
