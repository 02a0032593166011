namespace Spindle;

/// <summary>What <see cref="AppendLog.Scan"/> found in a file of framed records: the whole records, in file order, and the stretches that were not.</summary>
public sealed class AppendLogScan
{
    internal AppendLogScan(IReadOnlyList<ReadOnlyMemory<byte>> records, IReadOnlyList<(long Offset, long Length)> damaged)
    {
        Records = records;
        Damaged = damaged;
    }

    /// <summary>The payload of every whole record (its length and checksum agree), in file order.</summary>
    public IReadOnlyList<ReadOnlyMemory<byte>> Records { get; }

    /// <summary>
    /// The stretches of the file that hold no whole record, skipped: a record torn by a writer that died in
    /// the middle of its <c>write(2)</c> (followed by other writers' whole records), or an unfinished tail.
    /// Empty for a file written only by writers that lived.
    /// </summary>
    public IReadOnlyList<(long Offset, long Length)> Damaged { get; }
}
