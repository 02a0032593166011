using Spindle.Workloads;

namespace Spindle.Tool.Tune;

/// <summary>One option column of seed 003's sweep.</summary>
/// <param name="Name">As the tables show it.</param>
/// <param name="Options">The <see cref="FileOptions"/> the stream is opened with.</param>
/// <param name="Direct">Unbuffered I/O (O_DIRECT), the Linux form of the seed's FILE_FLAG_NO_BUFFERING.</param>
public sealed record TuneOption(string Name, FileOptions Options, bool Direct)
{
    /// <summary>The options of the sweep.</summary>
    public static IReadOnlyList<TuneOption> All { get; } =
    [
        new("None", FileOptions.None, false),
        new("SequentialScan", FileOptions.SequentialScan, false),
        new("WriteThrough", FileOptions.WriteThrough, false),
        new("DirectIO", FileOptions.None, true),
    ];
}

/// <summary>The buffer and block sizes swept, and the size of the file.</summary>
/// <param name="Buffers">The stream buffer sizes (the seed's "Buffer").</param>
/// <param name="Blocks">The sizes of each Read/Write call (the seed's "Block").</param>
/// <param name="FileSize">The bytes written and read per measurement (the seed: 30 MB).</param>
/// <param name="Repetitions">Measurements per combination; the median counts.</param>
/// <param name="TimeCap">A measurement that runs longer stops and is extrapolated (write-through with tiny blocks takes minutes).</param>
public sealed record TuneGrid(IReadOnlyList<int> Buffers, IReadOnlyList<int> Blocks, long FileSize, int Repetitions, TimeSpan TimeCap)
{
    private static readonly int[] s_full = [1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144];
    private static readonly int[] s_quick = [4096, 16384, 65536, 262144];

    /// <summary>The seed's second test: 1 KiB to 256 KiB, 30 MB, three repetitions.</summary>
    public static TuneGrid Full(long fileSize) => new(s_full, s_full, fileSize, 3, TimeSpan.FromSeconds(1));

    /// <summary>Four sizes per axis, one repetition pair: well under a minute.</summary>
    public static TuneGrid Quick(long fileSize) => new(s_quick, s_quick, fileSize, 2, TimeSpan.FromMilliseconds(250));

    /// <summary>The seed's rule of thumb for this L1d size: buffer 25–50 % (middle: 37.5 %), block 60–80 % (middle: 70 %), in 512-byte steps.</summary>
    public static (int Buffer, int Block) RuleOfThumb(long l1d) =>
        (Math.Max(512, (int)(l1d * 0.375) / 512 * 512), Math.Max(512, (int)(l1d * 0.70) / 512 * 512));

    /// <summary>Describes the grid in one line.</summary>
    public override string ToString() =>
        $"{Buffers.Count} buffer sizes × {Blocks.Count} block sizes ({Units.Bytes(Buffers[0])}–{Units.Bytes(Buffers[^1])}) × {TuneOption.All.Count} options, {Units.Bytes(FileSize)} file";
}
