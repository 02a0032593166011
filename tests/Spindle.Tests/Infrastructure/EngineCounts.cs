using System.Runtime.CompilerServices;
using Spindle.Diagnostics;
using Spindle.Engines.IoUring;

namespace Spindle.Tests.Infrastructure;

/// <summary>
/// What the engines report through the library's probe (<see cref="EngineProbe"/>), counted for tests: per ring
/// (<see cref="Of"/>) and, for what a thread does with its own ring or a log it scans, per calling thread. Installed
/// when the test assembly loads, so every count covers the whole run; tests compare two readings, or use a private
/// engine (<see cref="PrivateEngine"/>) whose counts only they move.
/// </summary>
internal sealed class EngineCounts : IEngineProbe
{
    private static readonly ConditionalWeakTable<object, RingCounts> s_rings = new();
    private static readonly ConditionalWeakTable<object, StrongBox<long>> s_pools = new();

    [ThreadStatic]
    private static int t_placing;
    [ThreadStatic]
    private static long t_rounds;
    [ThreadStatic]
    private static long t_ownCompletions;
    [ThreadStatic]
    private static long t_bytesDecoded;

    [ModuleInitializer]
    internal static void Install() => EngineProbe.Current = new EngineCounts();

    /// <summary>The counts of <paramref name="ring"/>.</summary>
    internal static RingCounts Of(RingThread ring) => CountsOf(ring);

    /// <summary>Operations the shared ring placed as SQEs so far (0 while it has not started); its own enters never move it.</summary>
    internal static long SharedRingPlacements => IoUringEngine.Running is { } engine ? Of(engine.Thread).Placed : 0;

    private static RingCounts CountsOf(object ring) => s_rings.GetValue(ring, static _ => new RingCounts());

    /// <summary>Buffers <paramref name="pool"/> rented and did not take back yet (since the test assembly loaded).</summary>
    internal static long Outstanding(AlignedMemoryPool pool) => Interlocked.Read(ref OutstandingOf(pool).Value);

    private static StrongBox<long> OutstandingOf(object pool) => s_pools.GetValue(pool, static _ => new StrongBox<long>());

    /// <summary>Whether a batch of the calling thread is being placed or waited for through its own ring.</summary>
    internal static bool PlacingOnThisThread => t_placing > 0;

    /// <summary>Rounds of reads the calling thread handed to its own ring.</summary>
    internal static long RoundsOnThisThread => t_rounds;

    /// <summary>Reads the kernel completed through the calling thread's own ring.</summary>
    internal static long OwnRingCompletionsOnThisThread => t_ownCompletions;

    /// <summary>Bytes of append logs the calling thread decoded and checksummed.</summary>
    internal static long BytesDecodedOnThisThread => t_bytesDecoded;

    void IEngineProbe.CompletionPosted(object ring) => Interlocked.Increment(ref CountsOf(ring).PostedCount);

    void IEngineProbe.SubmittingEnter(object ring) => Interlocked.Increment(ref CountsOf(ring).SubmittingEnterCount);

    void IEngineProbe.SqesInFlight(object ring, int inFlight)
    {
        RingCounts counts = CountsOf(ring);
        Interlocked.Increment(ref counts.PlacedCount);
        int most;
        while (inFlight > (most = Volatile.Read(ref counts.MostInFlight)) && Interlocked.CompareExchange(ref counts.MostInFlight, inFlight, most) != most)
        {
        }
    }

    void IEngineProbe.Waiting(object ring, int delta) => Interlocked.Add(ref CountsOf(ring).WaiterCount, delta);

    void IEngineProbe.Sleeping(object ring, bool asleep) => Volatile.Write(ref CountsOf(ring).AsleepFlag, asleep ? 1 : 0);

    bool IEngineProbe.HoldsPending(object ring)
        => s_rings.TryGetValue(ring, out RingCounts? counts)
        && counts.HoldPending;

    void IEngineProbe.DurableSqe(object ring, DurableSqeKind kind)
    {
        RingCounts counts = CountsOf(ring);
        switch (kind)
        {
            case DurableSqeKind.DataSync:
                Interlocked.Increment(ref counts.DataSyncCount);
                break;
            case DurableSqeKind.DataSyncWrite:
                Interlocked.Increment(ref counts.DataSyncWriteCount);
                break;
            default:
                Interlocked.Increment(ref counts.LinkedWriteCount);
                break;
        }
    }

    void IEngineProbe.OwnRingBatch(bool placing) => t_placing += placing ? 1 : -1;

    void IEngineProbe.OwnRingRound(int completions)
    {
        t_rounds++;
        t_ownCompletions += completions;
    }

    void IEngineProbe.PoolBuffers(object pool, int delta) => Interlocked.Add(ref OutstandingOf(pool).Value, delta);

    void IEngineProbe.LogBytesDecoded(long bytes) => t_bytesDecoded += bytes;
}

/// <summary>What one ring reported (<see cref="EngineCounts.Of"/>), and the one thing a test may ask of it.</summary>
internal sealed class RingCounts
{
    internal long PostedCount;
    internal long SubmittingEnterCount;
    internal long PlacedCount;
    internal int MostInFlight;
    internal int WaiterCount;
    internal int AsleepFlag;
    internal long DataSyncCount;
    internal long DataSyncWriteCount;
    internal long LinkedWriteCount;
    private volatile bool _holdPending;

    /// <summary>Completions queued for a pool thread so far (a completion handed to its waiter never is).</summary>
    internal long Posted => Interlocked.Read(ref PostedCount);

    /// <summary>How many <c>io_uring_enter</c> calls submitted SQEs.</summary>
    internal long SubmittingEnters => Interlocked.Read(ref SubmittingEnterCount);

    /// <summary>Operations placed on the ring as SQEs so far (a step placed again, after a short transfer, counts again).</summary>
    /// <remarks>Unlike the process's <c>io_uring_enter</c> count, the ring's own enters (its wait, its wake-up read) never move it.</remarks>
    internal long Placed => Interlocked.Read(ref PlacedCount);

    /// <summary>The most SQEs in flight at once so far.</summary>
    internal int MaxInFlight => Volatile.Read(ref MostInFlight);

    /// <summary>Threads blocked in <c>GetResult</c> on one of the ring's operations now.</summary>
    internal int Waiters => Volatile.Read(ref WaiterCount);

    /// <summary>Whether the ring's thread sleeps in <c>io_uring_enter</c> until a completion or a wake-up.</summary>
    internal bool IsSleeping => Volatile.Read(ref AsleepFlag) != 0;

    /// <summary>Data syncs submitted on their own (<c>FlushDataToDiskAsync</c>, or a sync submitted again after a linked write).</summary>
    internal long DataSyncSqes => Interlocked.Read(ref DataSyncCount);

    /// <summary>Writes submitted with <c>RWF_DSYNC</c>.</summary>
    internal long DataSyncWriteSqes => Interlocked.Read(ref DataSyncWriteCount);

    /// <summary>Writes submitted linked to an <c>fdatasync</c>.</summary>
    internal long LinkedWriteSqes => Interlocked.Read(ref LinkedWriteCount);

    /// <summary>While set, callers' operations stay in their lane, as when the ring has no room (private engines only).</summary>
    internal bool HoldPending
    {
        get => _holdPending;
        set => _holdPending = value;
    }
}
