using System.Buffers;
using System.Runtime.CompilerServices;
using Spindle.Syscalls;

namespace Spindle.Engines;

internal abstract partial class FileIoEngine
{
    /// <summary>
    /// Reads many (buffer, offset) pairs and completes when every read has: each result at its request's index, a read's
    /// failure in its own result. Arguments arrive validated (every request, <c>O_DIRECT</c> alignment included) and the
    /// token is not cancelled yet. This form starts every read with <see cref="ReadAsync(Microsoft.Win32.SafeHandles.SafeFileHandle, Memory{byte}, long, CancellationToken)"/>
    /// before it awaits any; an engine with a better way (one submission) overrides it. When the token cancels reads,
    /// the task throws <see cref="OperationCanceledException"/> after all have completed; the other results are kept.
    /// </summary>
    public virtual ValueTask ReadBatchAsync(ReadOnlyMemory<BatchReadRequest> requests, Memory<BatchReadResult> results, CancellationToken cancellationToken)
    {
        ReadOnlySpan<BatchReadRequest> span = requests.Span;
        PendingRead[]? pending = null; // the reads that did not complete at once, awaited after all have started
        int pendingCount = 0;
        bool cancelled = false;        // a read that completed at once was cancelled by the token
        for (int i = 0; i < span.Length; i++)
        {
            BatchReadRequest request = span[i];
            ValueTask<int> read;
            try
            {
                read = ReadAsync(request.Handle, request.Buffer, BatchOffset(request), cancellationToken);
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
    private protected static long BatchOffset(in BatchReadRequest request)
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
}
