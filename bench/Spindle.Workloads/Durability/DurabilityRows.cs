namespace Spindle.Workloads.Durability;

/// <summary>The rows of batch reads, durable writes and group commit, in report order.</summary>
public static class DurabilityRows
{
    /// <summary>Reads per batch, the queue depth the batch rows compare with fio at.</summary>
    public const int BatchSize = 32;

    /// <summary>Every row at <paramref name="scale"/>.</summary>
    public static IEnumerable<Workload> Build(MatrixScale scale)
    {
        int batches = Math.Max(1, scale.RandomReadsPerInvocation / BatchSize);
        yield return new BatchReads(scale.HugeFile, BatchSize, direct: true, batches);
        yield return new BatchReads(scale.HugeFile, BatchSize, direct: true, batches, blocking: true);
        yield return new BatchReads(scale.HugeFile, BatchSize, direct: false, batches);
        yield return new BatchReads(scale.HugeFile, BatchSize, direct: false, batches, oneByOne: true);
        // Cached batches of other sizes: below and above the size from which Spindle shares a batch's copies with a
        // second core (docs/benchmarks.md, "Cached batches on one core and two").
        yield return new BatchReads(scale.HugeFile, 8, direct: false, Math.Max(1, scale.RandomReadsPerInvocation / 8));
        yield return new BatchReads(scale.HugeFile, 128, direct: false, Math.Max(1, scale.RandomReadsPerInvocation / 128));
        yield return new BatchReads(scale.HugeFile, BatchSize, direct: false, batches, blockSize: 64 * 1024);
        foreach (DurabilityCall call in new[] { DurabilityCall.Fsync, DurabilityCall.Fdatasync, DurabilityCall.RwfDsync })
        {
            yield return new DurableWrites(call, writes: 16);
        }
        yield return new DurableWrites(DurabilityCall.Fdatasync, writes: 16, asynchronous: true);
        yield return new DurableWrites(DurabilityCall.RwfDsync, writes: 16, asynchronous: true);
        if (OperatingSystem.IsLinux())
        {
            yield return new GroupCommit(writers: 32, recordsPerWriter: 8);
            yield return new GroupCommit(writers: 1, recordsPerWriter: 16);
            yield return new GroupCommit(writers: 1, recordsPerWriter: 16, baseline: true);
        }
    }
}
