using System.Buffers;
using Spindle.Engines.FastPath;
using Spindle.Engines.IoUring;
using Spindle.Syscalls;

namespace Spindle.Engines;

/// <summary>
/// A synchronous batch of reads on the thread-pool and io_uring engines: cached copies are shared with pool work items
/// when a second core may help (<see cref="CachedBatchShare"/>); on io_uring the reads that must go to a disk reach the
/// kernel together from a ring rented for the batch (row 17, <see cref="OwnRing"/>); the rest are read one by one.
/// </summary>
internal static class SynchronousBatch
{
    /// <summary>Reads the batch, or returns false (nothing read) where neither sharing nor a ring would help.</summary>
    internal static bool TryRead(ReadOnlySpan<BatchReadRequest> requests, Span<BatchReadResult> results)
    {
        FileIoEngine engine = EngineSelector.Default;
        if (requests.Length < 2 || engine.Kind == IoEngine.Sync)
        {
            return false;
        }
        bool viaRing = engine.Kind == IoEngine.IoUring && OwnRing.MayRent;
        bool share = engine.WorthSharing(requests, out int helpers);
        if (!viaRing && !share)
        {
            return false;
        }
        int[] rented = ArrayPool<int>.Shared.Rent(2 * requests.Length);
        BatchReadRequest[]? copy = null; // helpers run on other threads: they need the requests in memory, not on this stack
        CachedBatchShare? shared = null;
        try
        {
            if (share)
            {
                copy = ArrayPool<BatchReadRequest>.Shared.Rent(requests.Length);
                requests.CopyTo(copy);
                shared = CachedBatchShare.Start(copy.AsMemory(0, requests.Length), engine.Kind, helpers);
                shared.Run();
            }
            Span<int> members = rented.AsSpan(0, requests.Length);
            Span<int> prefixes = rented.AsSpan(requests.Length, requests.Length);
            int count = 0;
            HandleFactsOfRun run = default;
            for (int i = 0; i < requests.Length; i++)
            {
                BatchReadRequest request = requests[i];
                try
                {
                    int prefix = 0;
                    if (shared is not null && shared.Served(i, out prefix))
                    {
                        results[i] = new BatchReadResult(prefix);
                        continue;
                    }
                    HandleFacts facts = run.Of(request.Handle);
                    Memory<byte> buffer = request.Buffer[prefix..];
                    long offset = FileIoEngine.BatchOffset(request);
                    offset = offset < 0 ? offset : offset + prefix;
                    if (viaRing && offset >= 0 && Router.RouteSynchronousBatchMember(facts, buffer.Length) == Mechanism.OwnRing)
                    {
                        int cached = 0;
                        if (shared is null && ReadFastPath.TryComplete(request.Handle, facts, ref buffer, ref offset, engine.Kind, out cached, out int completed))
                        {
                            results[i] = new BatchReadResult(completed);
                            continue;
                        }
                        members[count] = i;
                        prefixes[count++] = prefix + cached;
                        continue;
                    }
                    results[i] = new BatchReadResult(prefix + HandleIo.Read(request.Handle, buffer.Span, offset));
                }
                catch (Exception e)
                {
                    results[i] = new BatchReadResult(e);
                }
            }
            if (count > 0)
            {
                OwnRing.Read(requests, results, members[..count], prefixes[..count]);
            }
        }
        finally
        {
            shared?.Release();
            if (copy is not null)
            {
                Array.Clear(copy, 0, requests.Length);
                ArrayPool<BatchReadRequest>.Shared.Return(copy);
            }
            ArrayPool<int>.Shared.Return(rented);
        }
        return true;
    }
}
