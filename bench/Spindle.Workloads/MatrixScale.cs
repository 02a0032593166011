namespace Spindle.Workloads;

/// <summary>
/// The sizes of the matrix. <see cref="Full"/> is SPEC §5's matrix as written; <see cref="Quick"/> keeps
/// every row but shrinks the large files so that <c>spindle bench --quick</c> takes about a minute.
/// </summary>
/// <param name="LargeFile">The "100 MiB" of the FileStream and RandomAccess rows.</param>
/// <param name="HugeFile">The "1 GiB" file of the random-read rows.</param>
/// <param name="RandomReadsPerInvocation">4 KiB reads per invocation of a random-read row.</param>
/// <param name="SequentialBytes">Bytes per invocation of the sequential O_DIRECT rows.</param>
public sealed record MatrixScale(long LargeFile, long HugeFile, int RandomReadsPerInvocation, long SequentialBytes)
{
    /// <summary>SPEC §5 as written.</summary>
    public static MatrixScale Full { get; } = new(100 * Units.MiB, Units.GiB, 4096, 256 * Units.MiB);

    /// <summary>About a minute for the whole matrix.</summary>
    public static MatrixScale Quick { get; } = new(8 * Units.MiB, 64 * Units.MiB, 512, 32 * Units.MiB);
}
