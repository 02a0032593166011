namespace Spindle.Workloads;

/// <summary>The fio job that measures the same access pattern as a row, as the physical limit.</summary>
/// <param name="ReadWrite">fio's <c>--rw</c>: randread, read or write.</param>
/// <param name="BlockSize">Bytes per I/O (<c>--bs</c>).</param>
/// <param name="IoEngine">fio's <c>--ioengine</c>: psync or io_uring.</param>
/// <param name="IoDepth">Operations in flight (<c>--iodepth</c>).</param>
/// <param name="Direct">True for O_DIRECT (<c>--direct=1</c>); false keeps the page cache (<c>--invalidate=0</c>).</param>
/// <param name="FileName">The file fio works on; set by the row's setup.</param>
/// <param name="FileSize">The bytes of the file fio uses (<c>--size</c>).</param>
public sealed record FioJob(string ReadWrite, int BlockSize, string IoEngine, int IoDepth, bool Direct, string FileName, long FileSize)
{
    /// <summary>
    /// A file on a memory file system whose first pages fio takes as its I/O buffers
    /// (<c>--iomem=mmapshared:</c>), the same pages the row's contenders use (<see cref="SharedIoBuffers"/>);
    /// null: fio allocates its own.
    /// </summary>
    public string? IoMemoryFile { get; init; }

    /// <summary>
    /// fio's <c>psync</c> engine with one thread per caller (<c>numjobs</c> = <paramref name="callers"/>), each reading
    /// and waiting in turn, the figures of all threads summed: the shape of callers that each block on their own I/O.
    /// </summary>
    public static FioJob ThreadPerCaller(string readWrite, int blockSize, int callers, bool direct, string fileName, long fileSize)
        => new(readWrite, blockSize, "psync", 1, direct, fileName, fileSize)
        {
            ExtraArguments = [$"--numjobs={callers}", "--thread", "--group_reporting"],
        };

    /// <summary>More fio arguments after the others (for example <c>--numjobs</c>, batched submission, a sync after each write), or none.</summary>
    public IReadOnlyList<string> ExtraArguments { get; init; } = [];

    /// <summary>fio's command-line arguments for a run of <paramref name="runtime"/> (whole milliseconds) with JSON output.</summary>
    public IReadOnlyList<string> Arguments(TimeSpan runtime) =>
    [
        .. IoMemoryFile is null ? (string[])[] : [$"--iomem=mmapshared:{IoMemoryFile}"],
        "--name=spindle",
        $"--filename={FileName}",
        $"--rw={ReadWrite}",
        $"--bs={BlockSize}",
        $"--size={FileSize}",
        $"--ioengine={IoEngine}",
        $"--iodepth={IoDepth}",
        $"--direct={(Direct ? 1 : 0)}",
        $"--invalidate={(Direct ? 1 : 0)}",
        $"--runtime={Runtime(runtime)}",
        "--time_based",
        "--output-format=json",
        "--lat_percentiles=1", // percentiles of the whole latency (submission and completion), as callers measure theirs
        .. ExtraArguments,
    ];

    /// <summary>The command as a person would type it.</summary>
    public string CommandLine(TimeSpan runtime) => "fio " + string.Join(' ', Arguments(runtime));

    // fio reads a bare number as seconds and takes an "ms" suffix.
    private static string Runtime(TimeSpan runtime)
    {
        long milliseconds = Math.Max(1, (long)runtime.TotalMilliseconds);
        return milliseconds % 1000 == 0
            ? (milliseconds / 1000).ToString(System.Globalization.CultureInfo.InvariantCulture)
            : milliseconds.ToString(System.Globalization.CultureInfo.InvariantCulture) + "ms";
    }
}
