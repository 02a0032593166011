using System.Globalization;
using Spindle.Workloads;
using Spindle.Tool.Cli;
using Spindle.Tool.Reports;

namespace Spindle.Tool.Tune;

/// <summary><c>spindle tune</c>: a buffer × block × options sweep on this machine, ending in a recommendation that repeats.</summary>
public sealed class TuneCommand : ICommand
{
    private const long DefaultSize = 30 * 1000 * 1000;   // the seed's 30 MB

    /// <inheritdoc />
    public string Name => "tune";

    /// <inheritdoc />
    public string Summary => "find the best buffer and block sizes and options on this machine";

    /// <inheritdoc />
    public string Help => """
        usage: spindle tune [--dir PATH] [--size N] [--reads cold|warm] [--quick] [--top N] [--out PATH]

        Finds the stream buffer size, block size (bytes per Read/Write call) and file options that are
        fastest on this machine: writes and then reads a file through SpindleFileStream for every buffer
        size × block size × option that applies to the direction (writes: None, WriteThrough, DirectIO;
        reads: None, SequentialScan, DirectIO). The fastest cells of each direction then run again side
        by side, in rotating rounds, and each gets a median time and its noise (± the 95 % interval's
        half-width). Settings within the noise of the fastest tie; the recommendation is then picked by
        a stated rule (no option before an option, then the smaller buffer, then the smaller block),
        and the output lists the tie. It compares the result with the common rule of thumb (buffer
        25-50 %, block 60-80 % of the CPU's L1 data cache) and writes tune-heatmap.svg (buffer × block,
        the best option in each cell). A full sweep takes a few minutes.

          --dir PATH      where the test file goes (default: the current directory)
          --size N        file size: 30MB (default), 8MB with --quick; accepts k, m, g suffixes
          --reads CASE    cold (default): the file's pages are dropped from the page cache before each
                          read pass, so reads come from the device; warm: the file is cached, as for a
                          hot file read again and again
          --quick         4 sizes per axis instead of 9, an 8 MB file: well under a minute
          --top N         rows per table (default 10)
          --out PATH      where tune-heatmap.svg goes (default: the current directory)

        Ctrl-C or SIGTERM stops the sweep and removes its file (exit code 130 or 143).
        """;

    private static readonly string[] Valued = ["--dir", "--size", "--top", "--out", "--reads"];
    private static readonly string[] Switches = ["--quick"];

    /// <inheritdoc />
    public int Run(IReadOnlyList<string> args, ToolConsole console)
    {
        Arguments line = Arguments.Parse(args, Valued, Switches);
        if (line.Help)
        {
            console.Out.WriteLine(Help);
            return 0;
        }
        if (line.Positional.Count > 0)
        {
            throw new UsageException($"unexpected argument: {line.Positional[0]}");
        }
        bool quick = line.Has("--quick");
        long size = line.Size("--size", quick ? 8 * Units.MiB : DefaultSize);
        int top = line.Int("--top", 10);
        string directory = Directories.Writable(line.Value("--dir", "."), "--dir");
        string output = Directories.Writable(line.Value("--out", "."), "--out");
        TuneGrid grid = quick ? TuneGrid.Quick(size) : TuneGrid.Full(size);
        ReadCase reads = line.Value("--reads", "cold") switch
        {
            "cold" => ReadCase.Cold,
            "warm" => ReadCase.Warm,
            string other => throw new UsageException($"--reads takes cold or warm, not '{other}'"),
        };

        using var files = new BenchFiles(directory);
        files.EnsureFreeSpace(size + (64 << 20));
        string path = files.Target("tune");
        long l1d = CacheInfo.L1DataBytes();
        (int Buffer, int Block)? rule = l1d > 0 ? TuneGrid.RuleOfThumb(l1d) : null;

        console.Out.WriteLine($"spindle tune: {grid}, measuring {TunePass.StreamName}, in {directory}");
        console.Out.WriteLine(ReadCaseLine(reads, MachineFileSystem(directory)));
        var sweep = new TuneSweep(grid, path, reads);
        List<TuneMeasurement> results = sweep.Run(rule, console.Progress(), console.Cancellation);

        var recommendations = new List<string>();
        foreach (Direction direction in new[] { Direction.Write, Direction.Read })
        {
            List<TuneMeasurement> inGrid = results
                .Where(r => r.Direction == direction && grid.Buffers.Contains(r.Buffer) && grid.Blocks.Contains(r.Block))
                .OrderBy(r => r.Final ? 0 : 1).ThenBy(r => r.Time).ToList();
            if (inGrid.Count == 0)
            {
                continue;
            }
            TuneMeasurement baseline = inGrid.First(r => r.Buffer == grid.Buffers[0] && r.Block == grid.Blocks[0] && r.Option == TuneOption.None);
            TuneChoice choice = TuneChoice.From(inGrid.Where(r => r.Final).ToList());
            console.Out.WriteLine();
            console.Out.WriteLine($"{direction} ({Units.Bytes(grid.FileSize)}{(direction == Direction.Read ? $", {reads.ToString().ToLowerInvariant()}" : "")}): "
                + $"the first {inGrid.Count(r => r.Final)} rows ran again side by side, {grid.FinalRounds} rounds; ± is the noise of each time");
            console.Out.Write(TopTable(inGrid.Take(top), baseline).ToConsole());
            TuneMeasurement best = choice.Pick;
            string verb = direction == Direction.Write ? "writing" : "reading";
            recommendations.Add($"recommended for {verb}: buffer {Units.Bytes(best.Buffer)}, block {Units.Bytes(best.Block)}, {best.Option.Name} ({Time(best)} {Noise(best)}, {Percent(best, baseline)} against the baseline)");
            if (choice.Tied.Count > 1)
            {
                recommendations.Add(string.Create(CultureInfo.InvariantCulture,
                    $"  {choice.Tied.Count} settings tie within the noise (±{choice.Noise * 100:0} % of the fastest): {string.Join("; ", choice.Tied.Select(Setting))}; picked by the rule: {TuneChoice.Rule}"));
            }
            else
            {
                recommendations.Add(string.Create(CultureInfo.InvariantCulture,
                    $"  no other finalist within ±{choice.Noise * 100:0} % of it: a clear winner"));
            }
            if (rule is { } r && results.FirstOrDefault(m => m.Direction == direction && m.Buffer == r.Buffer && m.Block == r.Block
                && m.Option == (direction == Direction.Read ? TuneOption.SequentialScan : TuneOption.None)) is { } thumb)
            {
                recommendations.Add($"  rule of thumb (buffer {Units.Bytes(r.Buffer)}, block {Units.Bytes(r.Block)}, {thumb.Option.Name}): {Time(thumb)}, {Percent(thumb, choice.Fastest)} against the fastest");
            }
        }
        console.Out.WriteLine();
        foreach (string recommendation in recommendations)
        {
            console.Out.WriteLine(recommendation);
        }
        console.Out.WriteLine(l1d > 0
            ? $"L1 data cache: {Units.Bytes(l1d)}; rule of thumb: buffer 25-50 % ({Units.Bytes(l1d / 4)}-{Units.Bytes(l1d / 2)}), block 60-80 % ({Units.Bytes(l1d * 6 / 10)}-{Units.Bytes(l1d * 8 / 10)})"
            : "L1 data cache: unknown (/sys/devices/system/cpu/cpu0/cache does not say), rule of thumb not checked");
        string heatMap = Path.Combine(output, "tune-heatmap.svg");
        SvgFile.Save(HeatMap.Build(results, grid, $"spindle tune: {Units.Bytes(grid.FileSize)}, {TunePass.StreamName}"), heatMap);
        console.Out.WriteLine($"wrote {heatMap}");
        return 0;
    }

    private static TextTable TopTable(IEnumerable<TuneMeasurement> rows, TuneMeasurement baseline)
    {
        var table = new TextTable(["Position", "Buffer", "Block", "Calls", "Option", "vs baseline", "Time", "Noise", "Passes"],
            [false, true, true, true, false, true, true, true, true]);
        table.Add("Base line", Units.Bytes(baseline.Buffer), Units.Bytes(baseline.Block), baseline.Calls.ToString(CultureInfo.InvariantCulture), baseline.Option.Name, "",
            Time(baseline), Noise(baseline), baseline.Passes.ToString(CultureInfo.InvariantCulture));
        int position = 1;
        foreach (TuneMeasurement row in rows)
        {
            table.Add($"{position++}.", Units.Bytes(row.Buffer), Units.Bytes(row.Block), row.Calls.ToString(CultureInfo.InvariantCulture), row.Option.Name, Percent(row, baseline),
                Time(row), Noise(row), row.Passes.ToString(CultureInfo.InvariantCulture));
        }
        return table;
    }

    private static string Setting(TuneMeasurement m) => $"{Units.Bytes(m.Buffer)}/{Units.Bytes(m.Block)} {m.Option.Name} {Time(m)}";

    private static string Noise(TuneMeasurement m) =>
        double.IsFinite(m.Spread) ? string.Create(CultureInfo.InvariantCulture, $"±{m.Spread * 100:0.0} %") : "n/a";

    private static string ReadCaseLine(ReadCase reads, string fileSystem) => reads == ReadCase.Cold
        ? fileSystem == "tmpfs"
            ? "reads: cold asked, but the file is on tmpfs, where the pages are the file: every read is from memory"
            : "reads: cold — before each read pass the file's pages are dropped from the page cache (fsync + posix_fadvise DONTNEED), so reads come from the device (--reads warm: from the cache)"
        : "reads: warm — the file is in the page cache, so reads measure memory copies, not the device (--reads cold: from the device)";

    private static string MachineFileSystem(string directory)
    {
        try
        {
            return MachineInfo.Read(directory).FileSystem;
        }
        catch (IOException)
        {
            return "";
        }
    }

    private static string Time(TuneMeasurement m) => (m.Extrapolated ? "~" : "") + Units.Nanoseconds(m.Time.TotalNanoseconds);

    private static string Percent(TuneMeasurement m, TuneMeasurement reference) =>
        string.Create(CultureInfo.InvariantCulture, $"{(m.Time.TotalMilliseconds / reference.Time.TotalMilliseconds - 1) * 100:+0.00;-0.00} %");
}
