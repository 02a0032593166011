using Spindle.Workloads;

namespace Spindle.Tool.Tune;

/// <summary>One option column of the sweep.</summary>
/// <param name="Name">As the tables show it.</param>
/// <param name="Options">The <see cref="FileOptions"/> the stream is opened with.</param>
/// <param name="Direct">Unbuffered I/O (O_DIRECT), the Linux form of the seed's FILE_FLAG_NO_BUFFERING.</param>
public sealed record TuneOption(string Name, FileOptions Options, bool Direct)
{
    /// <summary>No option: the default, and the one a tie goes to.</summary>
    public static TuneOption None { get; } = new("None", FileOptions.None, false);

    /// <summary>A read-ahead hint (<c>posix_fadvise(SEQUENTIAL)</c>): reads only.</summary>
    public static TuneOption SequentialScan { get; } = new("SequentialScan", FileOptions.SequentialScan, false);

    /// <summary>Every write reaches the device before it returns (<c>O_SYNC</c>): writes only.</summary>
    public static TuneOption WriteThrough { get; } = new("WriteThrough", FileOptions.WriteThrough, false);

    /// <summary>Unbuffered I/O (<c>O_DIRECT</c>): both directions.</summary>
    public static TuneOption DirectIO { get; } = new("DirectIO", FileOptions.None, true);

    /// <summary>Every option of the sweep.</summary>
    public static IReadOnlyList<TuneOption> All { get; } = [None, SequentialScan, WriteThrough, DirectIO];

    /// <summary>The options that do something for <paramref name="direction"/>: no read-ahead hint for writes, no write-through for reads.</summary>
    public static IReadOnlyList<TuneOption> For(Direction direction) =>
        direction == Direction.Write ? [None, WriteThrough, DirectIO] : [None, SequentialScan, DirectIO];
}

/// <summary>The buffer and block sizes swept, and the size of the file.</summary>
/// <param name="Buffers">The stream buffer sizes (the seed's "Buffer").</param>
/// <param name="Blocks">The sizes of each Read/Write call (the seed's "Block").</param>
/// <param name="FileSize">The bytes written and read per measurement (the seed: 30 MB).</param>
/// <param name="Repetitions">Measurements per combination in the sweep; the median ranks it.</param>
/// <param name="TimeCap">A measurement that runs longer stops and is extrapolated (write-through with tiny blocks takes minutes).</param>
public sealed record TuneGrid(IReadOnlyList<int> Buffers, IReadOnlyList<int> Blocks, long FileSize, int Repetitions, TimeSpan TimeCap)
{
    private static readonly int[] s_full = [1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144];
    private static readonly int[] s_quick = [4096, 16384, 65536, 262144];

    /// <summary>Finalists per direction: the fastest cells of the sweep, measured again side by side.</summary>
    public int Finalists { get; init; } = 8;

    /// <summary>Rounds of the final stage: every finalist once per round, in a rotating order.</summary>
    public int FinalRounds { get; init; } = 7;

    /// <summary>1 KiB to 256 KiB, 30 MB, three repetitions, then 9 final rounds.</summary>
    public static TuneGrid Full(long fileSize) => new(s_full, s_full, fileSize, 3, TimeSpan.FromSeconds(1)) { FinalRounds = 9 };

    /// <summary>Four sizes per axis, two repetitions, then 7 final rounds.</summary>
    public static TuneGrid Quick(long fileSize) => new(s_quick, s_quick, fileSize, 2, TimeSpan.FromMilliseconds(250)) { FinalRounds = 7 };

    /// <summary>The L1 rule of thumb for this L1d size: buffer 25–50 % (middle: 37.5 %), block 60–80 % (middle: 70 %), in 512-byte steps.</summary>
    public static (int Buffer, int Block) RuleOfThumb(long l1d) =>
        (Math.Max(512, (int)(l1d * 0.375) / 512 * 512), Math.Max(512, (int)(l1d * 0.70) / 512 * 512));

    /// <summary>Describes the grid in one line.</summary>
    public override string ToString() =>
        $"{Buffers.Count} buffer sizes × {Blocks.Count} block sizes ({Units.Bytes(Buffers[0])}–{Units.Bytes(Buffers[^1])}) × 3 options per direction, {Units.Bytes(FileSize)} file";
}
