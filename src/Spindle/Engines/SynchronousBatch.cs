using System.Buffers;
using Microsoft.Win32.SafeHandles;
using Spindle.Engines.FastPath;
using Spindle.Engines.IoUring;

namespace Spindle.Engines;

/// <summary>
/// A synchronous batch of reads on io_uring: page-cache hits are copied on the calling thread, the reads row 17 of the
/// router sends to the kernel go to the thread's own ring together (<see cref="OwnRing"/>), and the rest are read
/// on the calling thread one after the other, as without io_uring.
/// </summary>
internal static class SynchronousBatch
{
    /// <summary>Reads the batch, or returns false (nothing read) where io_uring is not the engine: the caller then reads one by one.</summary>
    internal static bool TryRead(ReadOnlySpan<BatchReadRequest> requests, Span<BatchReadResult> results)
    {
        if (requests.Length < 2 || EngineSelector.Default.Kind != IoEngine.IoUring || OwnRing.ForThisThread() is not OwnRing ring)
        {
            return false;
        }
        int[] rented = ArrayPool<int>.Shared.Rent(2 * requests.Length);
        try
        {
            Span<int> members = rented.AsSpan(0, requests.Length);
            Span<int> prefixes = rented.AsSpan(requests.Length, requests.Length);
            int count = 0;
            SafeFileHandle? lastHandle = null; // a batch's members mostly share a handle: its facts are looked up once per run
            HandleFacts? facts = null;
            for (int i = 0; i < requests.Length; i++)
            {
                BatchReadRequest request = requests[i];
                try
                {
                    if (!ReferenceEquals(request.Handle, lastHandle))
                    {
                        facts = HandleFacts.Of(request.Handle);
                        lastHandle = request.Handle;
                    }
                    Memory<byte> buffer = request.Buffer;
                    long offset = FileIoEngine.BatchOffset(request);
                    if (offset >= 0 && Router.RouteSynchronousBatchMember(facts!, buffer.Length) == Mechanism.OwnRing)
                    {
                        if (ReadFastPath.TryComplete(request.Handle, facts!, ref buffer, ref offset, IoEngine.IoUring, out int prefix, out int completed))
                        {
                            results[i] = new BatchReadResult(completed);
                            continue;
                        }
                        members[count] = i;
                        prefixes[count] = prefix;
                        count++;
                        continue;
                    }
                    results[i] = new BatchReadResult(Syscalls.HandleIo.Read(request.Handle, buffer.Span, offset));
                }
                catch (Exception e)
                {
                    results[i] = new BatchReadResult(e);
                }
            }
            ring.Read(requests, results, members[..count], prefixes[..count]);
        }
        finally
        {
            ArrayPool<int>.Shared.Return(rented);
        }
        return true;
    }
}
