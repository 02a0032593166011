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
    Sync = 1,

    /// <summary>What .NET does on Unix: the blocking system call runs on a thread-pool thread.</summary>
    ThreadPool = 2,

    /// <summary>Linux io_uring: operations are submitted to the kernel and complete without a blocked thread.</summary>
    /// <remarks>
    /// Where the kernel refuses io_uring, a request for this engine runs on <see cref="ThreadPool"/>
    /// (see <see cref="SpindleRandomAccess.IsIoUringAvailable"/>). On this engine and on
    /// <see cref="ThreadPool"/>, reads of cached pages and small writes to cached local files
    /// complete on the caller's thread (the fast paths; switches <c>Spindle.DisableReadFastPath</c>
    /// and <c>Spindle.DisableWriteFastPath</c>).
    /// </remarks>
    IoUring = 3,
}
