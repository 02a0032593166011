using System.Buffers;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Syscalls;

namespace Spindle.Engines;

internal abstract partial class FileIoEngine
{
    /// <summary>
    /// Reads many (buffer, offset) pairs, each result (or failure) at its request's index; arguments arrive validated and
    /// the token not yet cancelled. This form starts every read before it awaits any; an engine with one submission overrides it.
    /// When the token cancels reads, the task throws <see cref="OperationCanceledException"/> after all have completed.
    /// </summary>
    public virtual ValueTask ReadBatchAsync(ReadOnlyMemory<BatchReadRequest> requests, Memory<BatchReadResult> results, CancellationToken cancellationToken)
    {
        ReadOnlySpan<BatchReadRequest> span = requests.Span;
        PendingRead[]? pending = null; // the reads that did not complete at once, awaited after all have started
        int pendingCount = 0;
        bool cancelled = false;        // a read that completed at once was cancelled by the token
        FastPath.HandleFactsOfRun run = default; // a batch's members mostly share a handle
        for (int i = 0; i < span.Length; i++)
        {
            BatchReadRequest request = span[i];
            ValueTask<int> read;
            try
            {
                read = ReadAsync(request.Handle, run.Of(request.Handle), request.Buffer, BatchOffset(request), FastPath.ReadFastPath.Enabled, cancellationToken);
            }
            catch (Exception e)
            {
                results.Span[i] = new BatchReadResult(e);
                continue;
            }
            if (read.IsCompleted)
            {
                BatchReadResult result = Outcome(read);
                cancelled |= IsCancellation(result.Exception, cancellationToken);
                results.Span[i] = result;
                continue;
            }
            pending ??= ArrayPool<PendingRead>.Shared.Rent(span.Length - i);
            pending[pendingCount++] = new PendingRead(read, i);
        }
        if (pending is null)
        {
            return cancelled ? ValueTask.FromCanceled(cancellationToken) : default;
        }
        return AwaitBatchAsync(pending, pendingCount, results, cancelled, cancellationToken);
    }

    /// <summary>The offset a batch request reads at: none (-1) for handles without positions.</summary>
    internal static long BatchOffset(in BatchReadRequest request)
        => SafeFileHandleInternals.CanSeek(request.Handle) ? request.FileOffset : -1;

    /// <summary>Whether a read's error is the batch's token cancelling it.</summary>
    private protected static bool IsCancellation(Exception? error, CancellationToken cancellationToken)
        => error is OperationCanceledException && cancellationToken.IsCancellationRequested;

    private static BatchReadResult Outcome(ValueTask<int> read)
    {
        try
        {
            return new BatchReadResult(read.GetAwaiter().GetResult());
        }
        catch (Exception e)
        {
            return new BatchReadResult(e);
        }
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private static async ValueTask AwaitBatchAsync(PendingRead[] pending, int count, Memory<BatchReadResult> results, bool cancelled, CancellationToken cancellationToken)
    {
        try
        {
            for (int i = 0; i < count; i++)
            {
                BatchReadResult result;
                try
                {
                    result = new BatchReadResult(await pending[i].Read.ConfigureAwait(false));
                }
                catch (Exception e)
                {
                    cancelled |= IsCancellation(e, cancellationToken);
                    result = new BatchReadResult(e);
                }
                results.Span[pending[i].Index] = result;
            }
        }
        finally
        {
            Array.Clear(pending, 0, count);
            ArrayPool<PendingRead>.Shared.Return(pending);
        }
        if (cancelled)
        {
            throw new OperationCanceledException(cancellationToken);
        }
    }

    // A read that was started and not yet complete, and the index of its request.
    private readonly record struct PendingRead(ValueTask<int> Read, int Index);

    /// <summary>The least work from which a batch's cached members are shared (<see cref="EngineTunables.BatchShareMinimumWork"/>); per engine for tests.</summary>
    internal int BatchShareMinimumWork = EngineTunables.BatchShareMinimumWork;

    /// <summary>The pool work items a shared batch asks for: -1 for one fewer than the cores (tests force one on any machine).</summary>
    internal int BatchShareHelpers = -1;

    /// <summary>A shared phase for <paramref name="requests"/> when the batch is worth sharing, else null (the caller copies everything itself).</summary>
    internal CachedBatchShare? TryShareCachedMembers(ReadOnlyMemory<BatchReadRequest> requests)
        => WorthSharing(requests.Span, out int helpers) ? CachedBatchShare.Start(requests, Kind, helpers) : null;

    /// <summary>
    /// Whether <paramref name="requests"/> are worth sharing, and with how many pool work items: only members a copy may
    /// serve count (non-blocking reads, memory-backed storage), so a batch of <c>O_DIRECT</c> disk reads wakes no helper.
    /// </summary>
    internal bool WorthSharing(ReadOnlySpan<BatchReadRequest> requests, out int helpers)
    {
        helpers = BatchShareHelpers >= 0 ? BatchShareHelpers : Environment.ProcessorCount - 1;
        if (helpers <= 0 || !FastPath.ReadFastPath.Enabled)
        {
            return false;
        }
        long work = 0;
        FastPath.HandleFactsOfRun run = default;
        for (int i = 0; i < requests.Length && work < BatchShareMinimumWork; i++)
        {
            FastPath.HandleFacts facts = run.Of(requests[i].Handle);
            if (facts.NonBlockingReads || facts.SynchronousBackend)
            {
                work += EngineTunables.BatchMemberWeight + requests[i].Buffer.Length;
            }
        }
        helpers = Math.Min(helpers, requests.Length - 1);
        return work >= BatchShareMinimumWork;
    }
}

/// <summary>
/// Work sharing for a batch's page-cache hits: the caller and up to (cores - 1) pool work items claim members from one
/// shared index and try each on the fast path (memory-backed storage with the router's inline read), recording the
/// bytes read or a miss's cached prefix. The caller never waits for a helper that has not started: it claims what is
/// left, then waits only for members a helper is copying now. Only then does it complete hits and route misses, on its
/// own thread, so that misses reach the ring together and no buffer is touched after the batch completes: a late helper
/// finds no member left and touches only this object, which returns to its pool when the caller and every helper let go.
/// </summary>
internal sealed class CachedBatchShare : IThreadPoolWorkItem
{
    private static readonly OperationPool<CachedBatchShare> s_pool = new(64);

    private ReadOnlyMemory<BatchReadRequest> _requests; // default once the caller has let go
    private IoEngine _engine;
    private int _count;
    private int[] _outcome = new int[32]; // per member: bytes read (>= 0), or ~prefix for a miss
    private int _references;              // the caller's and each queued helper's
    private int _participants;            // the caller and its helpers
    private PaddedCounters _counters;

    private CachedBatchShare()
    {
    }

    /// <summary>Starts sharing <paramref name="requests"/> with <paramref name="helpers"/> pool work items.</summary>
    internal static CachedBatchShare Start(ReadOnlyMemory<BatchReadRequest> requests, IoEngine engine, int helpers)
    {
        CachedBatchShare share = s_pool.TryRent() ?? new CachedBatchShare();
        int count = requests.Length;
        if (share._outcome.Length < count)
        {
            share._outcome = new int[Math.Max(count, share._outcome.Length * 2)];
        }
        share._requests = requests;
        share._engine = engine;
        share._count = count;
        share._counters = default;
        share._participants = 1 + helpers;
        Volatile.Write(ref share._references, 1 + helpers);
        for (int i = 0; i < helpers; i++)
        {
            System.Threading.ThreadPool.UnsafeQueueUserWorkItem(share, preferLocal: false);
        }
        return share;
    }

    /// <summary>The caller's part: claims members until none is left, then waits for those helpers are copying.</summary>
    internal void Run()
    {
        int helped = _count - Claim();
        SpinWait spin = default;
        while (Volatile.Read(ref _counters.HelpersDone) != helped)
        {
            spin.SpinOnce(sleep1Threshold: -1);
        }
    }

    /// <summary>Whether member <paramref name="index"/> was served from the cache (<paramref name="bytes"/> read); else the bytes of its cached prefix.</summary>
    internal bool Served(int index, out int bytes)
    {
        int outcome = _outcome[index];
        bytes = outcome >= 0 ? outcome : ~outcome;
        return outcome >= 0;
    }

    /// <summary>The caller is done with the outcomes.</summary>
    internal void Release()
    {
        _requests = default;
        Unreference();
    }

    void IThreadPoolWorkItem.Execute()
    {
        int done = Claim();
        if (done > 0)
        {
            Interlocked.Add(ref _counters.HelpersDone, done);
        }
        Unreference();
    }

    // Claims and tries members until none is left; returns how many this thread did. A claim is a quarter of each
    // participant's share of what is left: the contended index is taken a few times per batch, and the runs shrink to
    // single members at the end, where the caller may wait.
    private int Claim()
    {
        int done = 0;
        int divisor = 4 * _participants;
        FastPath.HandleFactsOfRun facts = default; // a batch's members mostly share a handle
        int next = Volatile.Read(ref _counters.Next);
        while (true)
        {
            int remaining = _count - next;
            if (remaining <= 0)
            {
                return done;
            }
            int take = Math.Max(1, remaining / divisor);
            int seen = Interlocked.CompareExchange(ref _counters.Next, next + take, next);
            if (seen != next)
            {
                next = seen;
                continue;
            }
            ReadOnlySpan<BatchReadRequest> requests = _requests.Span;
            for (int index = next; index < next + take; index++)
            {
                _outcome[index] = Try(requests[index], ref facts);
            }
            done += take;
            next = Volatile.Read(ref _counters.Next);
        }
    }

    private int Try(in BatchReadRequest request, ref FastPath.HandleFactsOfRun run)
    {
        try
        {
            SafeFileHandle handle = request.Handle;
            FastPath.HandleFacts facts = run.Of(handle);
            Memory<byte> buffer = request.Buffer;
            long offset = FileIoEngine.BatchOffset(request);
            if (facts.SynchronousBackend)
            {
                // Memory-backed storage: the read is the copy the router would make inline (row 3).
                return HandleIo.Read(handle, buffer.Span, offset);
            }
            return FastPath.ReadFastPath.TryComplete(handle, facts, ref buffer, ref offset, _engine, out int prefix, out int completed) ? completed : ~prefix;
        }
        catch (Exception)
        {
            return ~0; // the engine's own path reads it again and reports the error as a lone read would
        }
    }

    private void Unreference()
    {
        if (Interlocked.Decrement(ref _references) == 0)
        {
            s_pool.Return(this);
        }
    }

    // The claim index and the helpers' count on cache lines of their own: both are written by every thread.
    [StructLayout(LayoutKind.Explicit, Size = 192)]
    private struct PaddedCounters
    {
        [FieldOffset(64)]
        public int Next;

        [FieldOffset(128)]
        public int HelpersDone;
    }
}
