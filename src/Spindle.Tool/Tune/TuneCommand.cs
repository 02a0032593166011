using System.Globalization;
using Spindle.Workloads;
using Spindle.Tool.Cli;
using Spindle.Tool.Reports;

namespace Spindle.Tool.Tune;

/// <summary><c>spindle tune</c>: seed 003's buffer × block × options sweep on this machine, ending in a recommendation.</summary>
public sealed class TuneCommand : ICommand
{
    private const long DefaultSize = 30 * 1000 * 1000;   // the seed's 30 MB

    /// <inheritdoc />
    public string Name => "tune";

    /// <inheritdoc />
    public string Summary => "find the best buffer and block sizes and options on this machine";

    /// <inheritdoc />
    public string Help => """
        usage: spindle tune [--dir PATH] [--size N] [--quick] [--top N] [--out PATH]

        Finds the stream buffer size, block size (bytes per Read/Write call) and file options that are
        fastest on this machine: writes and then reads a file through SpindleFileStream for every buffer
        size × block size × option (None, SequentialScan, WriteThrough, DirectIO), prints the fastest
        combinations against the baseline (the smallest buffer and block with None), recommends
        settings for reading and for writing, compares them with the common rule of thumb (buffer
        25-50 %, block 60-80 % of the CPU's L1 data cache), and writes tune-heatmap.svg (buffer × block,
        the best option in each cell). A full sweep takes a few minutes.

          --dir PATH   where the test file goes (default: the current directory)
          --size N     file size: 30MB (default), 8MB with --quick; accepts k, m, g suffixes
          --quick      4 sizes per axis instead of 9, smaller file: well under a minute
          --top N      rows per table (default 10)
          --out PATH   where tune-heatmap.svg goes (default: the current directory)

        Ctrl-C or SIGTERM stops the sweep and removes its file (exit code 130 or 143).
        """;

    private static readonly string[] Valued = ["--dir", "--size", "--top", "--out"];
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

        using var files = new BenchFiles(directory);
        files.EnsureFreeSpace(size + (64 << 20));
        string path = files.Target("tune");
        long l1d = CacheInfo.L1DataBytes();
        (int Buffer, int Block)? rule = l1d > 0 ? TuneGrid.RuleOfThumb(l1d) : null;

        console.Out.WriteLine($"spindle tune: {grid}, measuring {TunePass.StreamName}, in {directory}");
        var sweep = new TuneSweep(grid, path);
        List<TuneMeasurement> results = sweep.Run(rule, console.Progress(), console.Cancellation);

        var recommendations = new List<string>();
        foreach (Direction direction in new[] { Direction.Write, Direction.Read })
        {
            List<TuneMeasurement> inGrid = results
                .Where(r => r.Direction == direction && grid.Buffers.Contains(r.Buffer) && grid.Blocks.Contains(r.Block))
                .OrderBy(r => r.Time).ToList();
            if (inGrid.Count == 0)
            {
                continue;
            }
            TuneMeasurement baseline = inGrid.First(r => r.Buffer == grid.Buffers[0] && r.Block == grid.Blocks[0] && r.Option == TuneOption.All[0]);
            console.Out.WriteLine();
            console.Out.WriteLine($"{direction} ({Units.Bytes(grid.FileSize)})");
            console.Out.Write(TopTable(inGrid.Take(top), baseline).ToConsole());
            TuneMeasurement best = inGrid[0];
            recommendations.Add($"recommended for {(direction == Direction.Write ? "writing" : "reading")}: buffer {Units.Bytes(best.Buffer)}, block {Units.Bytes(best.Block)}, {best.Option.Name} ({Time(best)}, {Percent(best, baseline)} against the baseline)");
            if (rule is { } r && results.FirstOrDefault(m => m.Direction == direction && m.Buffer == r.Buffer && m.Block == r.Block && m.Option == TuneOption.All[1]) is { } thumb)
            {
                recommendations.Add($"  rule of thumb (buffer {Units.Bytes(r.Buffer)}, block {Units.Bytes(r.Block)}, SequentialScan): {Time(thumb)}, {Percent(thumb, best)} against the best");
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
        var table = new TextTable(["Position", "Buffer", "Block", "Calls", "Option", "vs baseline", "Time"], [false, true, true, true, false, true, true]);
        table.Add("Base line", Units.Bytes(baseline.Buffer), Units.Bytes(baseline.Block), baseline.Calls.ToString(CultureInfo.InvariantCulture), baseline.Option.Name, "", Time(baseline));
        int position = 1;
        foreach (TuneMeasurement row in rows)
        {
            table.Add($"{position++}.", Units.Bytes(row.Buffer), Units.Bytes(row.Block), row.Calls.ToString(CultureInfo.InvariantCulture), row.Option.Name, Percent(row, baseline), Time(row));
        }
        return table;
    }

    private static string Time(TuneMeasurement m) => (m.Extrapolated ? "~" : "") + Units.Nanoseconds(m.Time.TotalNanoseconds);

    private static string Percent(TuneMeasurement m, TuneMeasurement reference) =>
        string.Create(CultureInfo.InvariantCulture, $"{(m.Time.TotalMilliseconds / reference.Time.TotalMilliseconds - 1) * 100:+0.00;-0.00} %");
}
