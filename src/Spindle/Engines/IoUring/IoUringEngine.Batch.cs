using Microsoft.Win32.SafeHandles;
using Spindle.Engines.FastPath;
using Spindle.Engines.ThreadPool;

namespace Spindle.Engines.IoUring;

/// <summary>
/// Batch reads (router row 13): each request goes where a read would (cached data on the caller's thread, inline, pool
/// or ring); the ring's share is queued whole and the ring thread woken once, so that it places them all and submits them
/// with one <c>io_uring_enter</c> when it was asleep (awake, busy with other work, it may take them over two passes).
/// One task for the caller, completed once by the last read.
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
        bool queued = false;
        const bool othersInFlight = true; // a batch's reads overlap each other
        for (int i = 0; i < span.Length; i++)
        {
            BatchReadRequest request = span[i];
            IoUringOperation? operation = null;
            try
            {
                SafeFileHandle handle = request.Handle;
                Memory<byte> buffer = request.Buffer;
                long offset = BatchOffset(request);
                // A batch's member arrives as a raw handle: its facts are looked up once, here, and travel on.
                HandleFacts facts = HandleFacts.Of(handle);
                int prefix = 0;
                if (ReadFastPath.Enabled && ReadFastPath.TryComplete(handle, facts, ref buffer, ref offset, Kind, out prefix, out int completed))
                {
                    batch.MemberCompleted(i, completed, null, onRing: false);
                    continue;
                }
                Mechanism mechanism = Router.RouteDurable(RequestKind.ReadBatch, facts, buffer.Length, offset, othersInFlight);
                switch (mechanism)
                {
                    case Mechanism.Inline:
                        batch.MemberCompleted(i, SyncEngine.Read(handle, buffer, offset, prefix).GetAwaiter().GetResult(), null, onRing: false);
                        continue;
                    case Mechanism.Pool:
                    case Mechanism.Blocking:
                        ValueTask<int> read = ThreadPoolEngine.Instance.Read(handle, facts, mechanism, buffer, offset, prefix, cancellationToken, Kind);
                        if (read.IsCompleted)
                        {
                            batch.MemberCompleted(i, read.GetAwaiter().GetResult(), null, onRing: false);
                        }
                        else
                        {
                            _ = AwaitPooledReadAsync(read, batch, i);
                        }
                        continue;
                }
                operation = Rent(facts.MayBlockIndefinitely);
                operation.PrepareRead(handle, buffer, offset, prefix);
            }
            catch (Exception e)
            {
                if (operation is not null)
                {
                    Abandon(operation);
                }
                batch.MemberCompleted(i, 0, e, onRing: false);
                continue;
            }
            operation.JoinBatch(batch, i);
            if (!operation.MayBlock)
            {
                FileRequestsInFlight.Enter(); // left in IoUringOperation.Complete, as for a single request
            }
            operation.Arm(cancellationToken);
            Thread.Queue(operation);
            queued = true;
        }
        if (queued)
        {
            Thread.Wake();
        }
        return batch.Release();
    }

    // A read the router sent to a pool thread (a character device): rare, so an allocation is acceptable.
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
