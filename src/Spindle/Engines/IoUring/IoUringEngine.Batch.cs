using Spindle.Diagnostics;
using Spindle.Engines.FastPath;
using Spindle.Engines.ThreadPool;

namespace Spindle.Engines.IoUring;

/// <summary>
/// Batch reads (router row 13): each request goes where a read would; the ring's share is submitted together, and the
/// last read completes the caller's one task. Enough cached copying first shares the fast path with pool work items
/// (<see cref="CachedBatchShare"/>).
/// </summary>
internal sealed partial class IoUringEngine
{
    public override ValueTask ReadBatchAsync(ReadOnlyMemory<BatchReadRequest> requests, Memory<BatchReadResult> results, CancellationToken cancellationToken)
    {
        ReadOnlySpan<BatchReadRequest> span = requests.Span;
        if (span.Length == 1)
        {
            return base.ReadBatchAsync(requests, results, cancellationToken); // one read: routed as any read
        }
        IoUringBatch batch = IoUringBatch.Rent(this, results, span.Length, cancellationToken);
        QueuedMembers queued = QueuedMembers.None;
        CachedBatchShare? share = TryShareCachedMembers(requests);
        share?.Run();
        for (int i = 0; i < span.Length; i++)
        {
            int bytes = 0;
            if (share is not null && share.Served(i, out bytes))
            {
                batch.MemberCompleted(i, bytes, null, onRing: false);
                continue;
            }
            queued |= StartBatchMember(batch, span[i], i, tryFastPath: share is null && ReadFastPath.Enabled, bytes, cancellationToken);
        }
        share?.Release();
        if (queued != QueuedMembers.None)
        {
            Thread.SubmitQueued(regularOnly: queued == QueuedMembers.Regular); // the batch's reads go to the kernel together
        }
        return batch.Release();
    }

    /// <summary>Starts member <paramref name="index"/> (after its cached <paramref name="prefix"/>) where the router sends it; says what it queued on the ring.</summary>
    private QueuedMembers StartBatchMember(IoUringBatch batch, in BatchReadRequest request, int index, bool tryFastPath, int prefix, CancellationToken cancellationToken)
    {
        RingTransfer? operation = null;
        try
        {
            // A batch's member arrives as a raw handle: its facts are looked up once, here, and travel on.
            FileRequest read = FileRequest.Read(request.Handle, HandleFacts.Of(request.Handle), request.Buffer, BatchOffset(request), tryFastPath, cancellationToken);
            if (tryFastPath && ReadFastPath.TryServe(ref read, Kind, out long completed))
            {
                batch.MemberCompleted(index, completed, null, onRing: false);
                return QueuedMembers.None;
            }
            if (prefix > 0) // only a batch that shared its cached copying has prefixes, and it tries no fast path per member
            {
                read = read.After(prefix);
            }
            Mechanism mechanism = Router.RouteDurable(RequestKind.ReadBatch, read.Facts, read.Length, read.Offset, othersInFlight: true);
            switch (mechanism)
            {
                case Mechanism.Inline:
                    batch.MemberCompleted(index, InlineExecutor.Call(read, Kind, IoMechanism.Inline), null, onRing: false);
                    return QueuedMembers.None;
                case Mechanism.Pool:
                case Mechanism.Blocking:
                    _ = AwaitPooledReadAsync(ThreadPoolEngine.Instance.RunOnWorker(read, mechanism, Kind).AsRead(), batch, index);
                    return QueuedMembers.None;
            }
            operation = Operations.Rent(Operations.Transfers, read.Facts.MayBlockIndefinitely);
            operation.Prepare(read);
        }
        catch (Exception e)
        {
            batch.MemberCompleted(index, 0, operation is null ? e : Operations.Abandon(operation, e), onRing: false);
            return QueuedMembers.None;
        }
        operation.JoinBatch(batch, index);
        operation.Arm(cancellationToken);
        Thread.Queue(operation);
        return operation.MayBlock ? QueuedMembers.MayBlock : QueuedMembers.Regular;
    }

    // What a batch queued on the ring: a member that may block for ever is submitted at once (flags: combine with |).
    [Flags]
    private enum QueuedMembers
    {
        None = 0,
        Regular = 1,
        MayBlock = 2,
    }

    // A read the router sent to a pool thread (a character device): rare, so an allocation, when it does not complete at once, is acceptable.
    private static async Task AwaitPooledReadAsync(ValueTask<int> read, IoUringBatch batch, int index)
    {
        int bytes = 0;
        Exception? error = null;
        try
        {
            bytes = await read.ConfigureAwait(false);
        }
        catch (Exception e)
        {
            error = e;
        }
        batch.MemberCompleted(index, bytes, error, onRing: false);
    }
}
