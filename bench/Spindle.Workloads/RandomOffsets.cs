namespace Spindle.Workloads;

/// <summary>The random-read rows' offsets: a fixed table of block-aligned offsets, the same on every run (seed 42), walked on from call to call.</summary>
public static class RandomOffsets
{
    /// <summary>Entries in a table: enough that consecutive invocations read different blocks.</summary>
    public const int Count = 1 << 16;

    /// <summary><see cref="Count"/> offsets of <paramref name="blockSize"/>-byte blocks drawn uniformly from a file of <paramref name="fileSize"/> bytes.</summary>
    public static long[] Table(long fileSize, int blockSize)
    {
        var offsets = new long[Count];
        var random = new Random(42);
        long blocks = fileSize / blockSize;
        for (int i = 0; i < offsets.Length; i++)
        {
            offsets[i] = random.NextInt64(blocks) * blockSize;
        }
        return offsets;
    }
}
