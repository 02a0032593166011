using Spindle.Engines;
using Spindle.Handles;

namespace Spindle;

public static partial class SpindleRandomAccess
{
    /// <summary>
    /// Reads many (buffer, offset) pairs, of one handle or of several, in one call: every read is started before
    /// any is awaited, and the caller awaits once. Each request gets its own result; one read's failure does not
    /// fail the others.
    /// </summary>
    /// <remarks>
    /// Every result is what <see cref="ReadAsync(Microsoft.Win32.SafeHandles.SafeFileHandle, Memory{byte}, long, CancellationToken)"/>
    /// would have returned or thrown for that request. Arguments are checked for every request before any read
    /// starts (null or closed handles, negative offsets, <c>O_DIRECT</c> alignment): a bad one throws and nothing is read.
    /// On the io_uring engine cached data is copied on the calling thread (with a pool thread sharing the copies when the
    /// batch is large enough and the process has a second core) and the other reads are handed to the ring together, so
    /// that they go to the kernel in one submission; the task completes once, when the last read has. No read touches
    /// its buffer after the task completes.
    /// </remarks>
    /// <param name="requests">The reads.</param>
    /// <param name="results">Receives one result per request, at the request's index; at least as long as <paramref name="requests"/>.</param>
    /// <param name="cancellationToken">Cancels the reads still running; the task then throws <see cref="OperationCanceledException"/> after every read has let go of its buffer, and the results of the reads that finished are kept.</param>
    /// <returns>A task that completes when every read has completed.</returns>
    /// <exception cref="ArgumentException"><paramref name="results"/> is shorter than <paramref name="requests"/>, or a request's handle is invalid or its buffer or offset misaligned for <c>O_DIRECT</c>.</exception>
    /// <exception cref="ArgumentNullException">A request has no handle.</exception>
    /// <exception cref="ArgumentOutOfRangeException">A request's offset is negative.</exception>
    /// <exception cref="ObjectDisposedException">A request's handle is closed.</exception>
    public static ValueTask ReadBatchAsync(ReadOnlyMemory<BatchReadRequest> requests, Memory<BatchReadResult> results, CancellationToken cancellationToken = default)
        => ReadBatchAsync(requests, results, IoEngine.Auto, cancellationToken);

    /// <summary>As <see cref="ReadBatchAsync(ReadOnlyMemory{BatchReadRequest}, Memory{BatchReadResult}, CancellationToken)"/>, on the given engine.</summary>
    /// <param name="requests">The reads.</param>
    /// <param name="results">Receives one result per request, at the request's index.</param>
    /// <param name="engine">The engine to run the reads on.</param>
    /// <param name="cancellationToken">Cancels the reads still running.</param>
    /// <returns>A task that completes when every read has completed.</returns>
    /// <exception cref="ArgumentOutOfRangeException">A request's offset is negative, or <paramref name="engine"/> is undefined.</exception>
    public static ValueTask ReadBatchAsync(ReadOnlyMemory<BatchReadRequest> requests, Memory<BatchReadResult> results, IoEngine engine, CancellationToken cancellationToken = default)
    {
        ValidateBatch(requests.Span, results.Length);
        if (Portable.PassThrough.Enabled)
        {
            Portable.PassThrough.Engine(engine);
            return ReadBatchPassThroughAsync(requests, results, cancellationToken);
        }
        FileIoEngine selected = Engine(engine);
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled(cancellationToken);
        }
        return requests.IsEmpty ? default : selected.ReadBatchAsync(requests, results, cancellationToken);
    }

    /// <summary>
    /// Reads many (buffer, offset) pairs, of one handle or of several, in one call that blocks the calling thread until
    /// every read has completed; each request gets its own result, as in
    /// <see cref="ReadBatchAsync(ReadOnlyMemory{BatchReadRequest}, Memory{BatchReadResult}, CancellationToken)"/>.
    /// </summary>
    /// <remarks>
    /// Where io_uring is the engine, cached data is copied on the calling thread and the reads that must go to a disk are
    /// handed to the kernel together from the thread's own small ring (made on its first batch, freed after the thread
    /// exits), and the thread waits once for all of them, so that the device works on them at once (RocksDB's
    /// <c>MultiRead</c> does the same). Elsewhere, and for memory-backed storage, FUSE, pipes and devices, the reads
    /// run one after the other on the calling thread. Every result is what
    /// <see cref="Read(Microsoft.Win32.SafeHandles.SafeFileHandle, Span{byte}, long)"/> would have returned or thrown for that request.
    /// </remarks>
    /// <param name="requests">The reads.</param>
    /// <param name="results">Receives one result per request, at the request's index; at least as long as <paramref name="requests"/>.</param>
    /// <exception cref="ArgumentException"><paramref name="results"/> is shorter than <paramref name="requests"/>, or a request's handle is invalid or its buffer or offset misaligned for <c>O_DIRECT</c>.</exception>
    /// <exception cref="ArgumentNullException">A request has no handle.</exception>
    /// <exception cref="ArgumentOutOfRangeException">A request's offset is negative.</exception>
    /// <exception cref="ObjectDisposedException">A request's handle is closed.</exception>
    public static void ReadBatch(ReadOnlySpan<BatchReadRequest> requests, Span<BatchReadResult> results)
    {
        ValidateBatch(requests, results.Length);
        if (!Portable.PassThrough.Enabled && SynchronousBatch.TryRead(requests, results))
        {
            return;
        }
        for (int i = 0; i < requests.Length; i++)
        {
            BatchReadRequest request = requests[i];
            try
            {
                results[i] = new BatchReadResult(Read(request.Handle, request.Buffer.Span, request.FileOffset));
            }
            catch (Exception e)
            {
                results[i] = new BatchReadResult(e);
            }
        }
    }

    // Every argument of every request, before anything is read.
    private static void ValidateBatch(ReadOnlySpan<BatchReadRequest> requests, int resultsLength)
    {
        if (resultsLength < requests.Length)
        {
            throw new ArgumentException($"The results hold {resultsLength} entries; the batch has {requests.Length} requests.", "results");
        }
        for (int i = 0; i < requests.Length; i++)
        {
            BatchReadRequest request = requests[i];
            long offset = ValidateInput(request.Handle, request.FileOffset);
            if (!Portable.PassThrough.Enabled)
            {
                Direct.DirectIOGuard.Check(request.Handle, request.Buffer, offset);
            }
        }
    }

    private static async ValueTask ReadBatchPassThroughAsync(ReadOnlyMemory<BatchReadRequest> requests, Memory<BatchReadResult> results, CancellationToken cancellationToken)
    {
        var reads = new ValueTask<int>[requests.Length];
        for (int i = 0; i < reads.Length; i++)
        {
            BatchReadRequest request = requests.Span[i];
            try
            {
                reads[i] = System.IO.RandomAccess.ReadAsync(request.Handle, request.Buffer, request.FileOffset, cancellationToken);
            }
            catch (Exception e)
            {
                reads[i] = ValueTask.FromException<int>(e);
            }
        }
        bool cancelled = false;
        for (int i = 0; i < reads.Length; i++)
        {
            BatchReadResult result;
            try
            {
                result = new BatchReadResult(await reads[i].ConfigureAwait(false));
            }
            catch (Exception e)
            {
                cancelled |= e is OperationCanceledException && cancellationToken.IsCancellationRequested;
                result = new BatchReadResult(e);
            }
            results.Span[i] = result;
        }
        if (cancelled)
        {
            throw new OperationCanceledException(cancellationToken);
        }
    }
}
