namespace Spindle.Diagnostics;

/// <summary>
/// What the engines (and the aligned buffer pool) tell a test about their own bookkeeping (the test project's <c>EngineCounts</c> implements this and
/// keeps the counts), and the one question a test may answer to hold operations back. Called from any thread, on the
/// engines' hot paths: an implementation never blocks and never throws. A ring is named by its <c>RingThread</c> and a
/// pool by itself, as plain objects, so that this folder depends on none of the types it reports on.
/// </summary>
internal interface IEngineProbe
{
    /// <summary>A completion of <paramref name="ring"/> was queued for a pool thread (one handed to its waiter never is).</summary>
    void CompletionPosted(object ring);

    /// <summary>An <c>io_uring_enter</c> of <paramref name="ring"/> submitted SQEs.</summary>
    void SubmittingEnter(object ring);

    /// <summary><paramref name="ring"/> placed SQEs: <paramref name="inFlight"/> are now in flight.</summary>
    void SqesInFlight(object ring, int inFlight);

    /// <summary>A thread starts (<paramref name="delta"/> 1) or stops (-1) waiting in <c>GetResult</c> for an operation of <paramref name="ring"/>.</summary>
    void Waiting(object ring, int delta);

    /// <summary>The thread of <paramref name="ring"/> goes to sleep in <c>io_uring_enter</c> (true) or woke (false).</summary>
    void Sleeping(object ring, bool asleep);

    /// <summary>Whether callers' operations on <paramref name="ring"/> stay in their lane, as when the ring has no room.</summary>
    bool HoldsPending(object ring);

    /// <summary><paramref name="ring"/> placed an SQE of a data sync or a durable write, of <paramref name="kind"/>.</summary>
    void DurableSqe(object ring, DurableSqeKind kind);

    /// <summary>The calling thread starts (true) or ends (false) a batch through its own ring.</summary>
    void OwnRingBatch(bool placing);

    /// <summary>The calling thread handed a round of reads to its own ring, of which the kernel completed <paramref name="completions"/>.</summary>
    void OwnRingRound(int completions);

    /// <summary><paramref name="pool"/> rented (<paramref name="delta"/> 1) or took back (-1) a buffer.</summary>
    void PoolBuffers(object pool, int delta);

    /// <summary>The calling thread decoded and checksummed <paramref name="bytes"/> bytes of an append log.</summary>
    void LogBytesDecoded(long bytes);
}

/// <summary>
/// The one place the engines report to a test. <see cref="Current"/> is null outside tests: each report is a null
/// check, and nothing is counted.
/// </summary>
internal static class EngineProbe
{
    private static volatile IEngineProbe? s_current;

    /// <summary>The probe a test installed, or null (always, outside tests).</summary>
    internal static IEngineProbe? Current
    {
        get => s_current;
        set => s_current = value;
    }
}

/// <summary>The SQEs a data sync or a durable write takes on the ring (<see cref="IEngineProbe.DurableSqe"/>).</summary>
internal enum DurableSqeKind
{
    /// <summary>An <c>fdatasync</c> on its own (<c>FlushDataToDiskAsync</c>, or a sync submitted again after a linked write).</summary>
    DataSync,

    /// <summary>A write with <c>RWF_DSYNC</c>.</summary>
    DataSyncWrite,

    /// <summary>A write linked to an <c>fdatasync</c>.</summary>
    LinkedWrite,
}
