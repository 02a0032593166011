namespace Spindle.Engines;

/// <summary>
/// Every number the engines were tuned with, each with why; the measurements are in docs/engines.md ("Tunables") and
/// docs/engine-v2.md beside the row they serve.
/// </summary>
internal static class EngineTunables
{
    // ---- Where a request runs (Router) ----

    /// <summary>The largest request on memory-backed storage copied on the caller's thread (row 3): a larger copy costs more than a pool thread's hop.</summary>
    internal const long MaxInlineCopy = 64 * 1024;

    /// <summary>The largest buffered write copied into the page cache on the caller's thread (row 7): a hop costs several times a copy this size.</summary>
    internal const int MaxInlineWrite = 64 * 1024;

    /// <summary>The most buffers a scatter read may have to be tried on the page-cache fast path: past it the copy of the iovec list outweighs a miss.</summary>
    internal const int MaxCachedScatterBuffers = 8;

    /// <summary>What a batch member counts, in bytes, beside its buffer, when the batch decides whether to share its cached copies with pool threads.</summary>
    internal const int BatchMemberWeight = 4096;

    /// <summary>The least work (bytes, each member weighted) from which a batch shares its cached copies with pool threads: below it the wake-up costs more than it saves.</summary>
    internal const int BatchShareMinimumWork = 6 * (4096 + BatchMemberWeight);

    // ---- The shared ring (RingThread, RingDriver) ----

    /// <summary>The shared ring's SQ entries: room for a burst of submissions between two enters.</summary>
    internal const uint RingSqEntries = 256;

    /// <summary>The shared ring's CQ entries (<c>IORING_SETUP_CQSIZE</c>): every operation in flight has a completion slot, so the CQ ring never overflows.</summary>
    internal const uint RingCqEntries = 4096;

    /// <summary>CQ slots kept free for cancellations and the wake-up read, so that a ring full of silent pipe reads can still be cancelled.</summary>
    internal const int CancelReserve = 32;

    /// <summary>io-wq workers that may wait at once (opens, syncs): the kernel's default of 4 per CPU made cold opens wait their turn.</summary>
    internal const uint BoundWorkers = 64;

    /// <summary>Requests for io-wq workers in the kernel at once: as many as <see cref="BoundWorkers"/> lets wait.</summary>
    internal const int WorkerBudget = 64;

    /// <summary>Requests a caller leaves for the thread that reaps the next completion (one will come: a request is in the kernel): at this many the caller submits them itself.</summary>
    internal const int SubmitBatch = 16;

    /// <summary>How long a run of continuations may hold back the requests they started, so that these go to the kernel together.</summary>
    internal const int BatchWindowMicroseconds = 20;

    /// <summary>How long a continuation runs to count as one that works, for the helper rule below (continuations that do not work run faster on one thread).</summary>
    internal const int HelperAfterMicroseconds = 10;

    /// <summary>How many of the last <see cref="HelperRecentContinuations"/> continuations must have worked before a helper is queued for the completions behind them: one long one is often a continuation preempted by another process.</summary>
    internal const int HelperAfterLongContinuations = 2;

    /// <summary>How many of the latest continuations the helper rule looks at.</summary>
    internal const int HelperRecentContinuations = 4;

    /// <summary>How often the ring's thread, parked while a pool thread polls, looks for completions nobody took (a continuation that runs long or blocks).</summary>
    internal const int ReaperCheckMilliseconds = 1;

    /// <summary>The longest wait between the parked ring thread's looks, its period doubling from <see cref="ReaperCheckMilliseconds"/> while the pool thread takes its completions: every look is a wake-up beside CPU-bound work.</summary>
    internal const int ReaperCheckMaxMilliseconds = 16;

    /// <summary>How long one pool work item runs continuations (polling the ring between them) before it yields its thread when other work items wait: the runtime's socket engine's slice; shorter ones cost throughput.</summary>
    internal const int CompletionTimeSliceMilliseconds = 15;

    /// <summary>How long a completion work item may wait for a pool thread before a thread of Spindle's own runs it: long enough that a busy pool is not taken for a starved one.</summary>
    internal const int StarvedPoolMilliseconds = 10;

    /// <summary>Checks without a waiting work item before the starved-pool watch sleeps: parking at once made every request of a steady load wake it.</summary>
    internal const int StarvedPoolQuietChecks = 100;

    /// <summary>How long after a start that failed for want of descriptors or memory io_uring is tried again.</summary>
    internal const long RingRetryMilliseconds = 100;

    // ---- Other threads and pools ----

    /// <summary>SQ entries of a synchronous batch's own ring: a batch of more goes in rounds of this many.</summary>
    internal const int OwnRingEntries = 32;

    /// <summary>How often an asynchronous open of a FIFO for reading looks whether a writer that opened it has written yet.</summary>
    internal const int FifoWriterLookMilliseconds = 5;

    /// <summary>How long an idle thread of Spindle's own (for handles that may wait for ever) lives before it retires.</summary>
    internal const int IdleThreadMilliseconds = 5_000;

    /// <summary>The most stripes (one per core) an operation pool has: beyond it, more stripes only hold more idle objects.</summary>
    internal const int MaxPoolStripes = 8;
}
