using Spindle.Workloads;
using Spindle.Tool.Cli;

namespace Spindle.Tool.Tune;

/// <summary>Seed 003's experiment: every buffer × block × option, written and then read, timed.</summary>
public sealed class TuneSweep(TuneGrid grid, string path)
{
    /// <summary>Runs the sweep, plus the rule-of-thumb combination; progress goes to <paramref name="progress"/>.</summary>
    public List<TuneMeasurement> Run((int Buffer, int Block)? ruleOfThumb, ProgressLine progress, CancellationToken cancellation)
    {
        var combinations = new List<(int Buffer, int Block, TuneOption Option)>();
        foreach (TuneOption option in TuneOption.All)
        {
            foreach (int buffer in grid.Buffers)
            {
                foreach (int block in grid.Blocks)
                {
                    combinations.Add((buffer, block, option));
                }
            }
        }
        if (ruleOfThumb is { } rule)
        {
            combinations.Add((rule.Buffer, rule.Block, TuneOption.All[1]));
        }
        using var pass = new TunePass(path, grid.FileSize, grid.TimeCap);
        var results = new List<TuneMeasurement>();
        int total = combinations.Count * 2, done = 0;
        foreach (Direction direction in new[] { Direction.Write, Direction.Read })
        {
            if (direction == Direction.Read)
            {
                pass.Write(1 << 20, 1 << 20, TuneOption.All[0]);   // the file every read pass reads
            }
            foreach ((int buffer, int block, TuneOption option) in combinations)
            {
                cancellation.ThrowIfCancellationRequested();
                progress.Report(done++, total, $"{direction,-5} buffer {Units.Bytes(buffer),8}  block {Units.Bytes(block),8}  {option.Name}");
                results.Add(Measure(pass, direction, buffer, block, option));
            }
        }
        progress.Clear();
        return results;
    }

    // Every combination runs, direct I/O included: the direct stream takes any buffer size and any block.
    private TuneMeasurement Measure(TunePass pass, Direction direction, int buffer, int block, TuneOption option)
    {
        var times = new List<TimeSpan>();
        bool capped = false;
        for (int i = 0; i < grid.Repetitions && !capped; i++)
        {
            (TimeSpan time, bool wasCapped) = direction == Direction.Write ? pass.Write(buffer, block, option) : pass.Read(buffer, block, option);
            times.Add(time);
            capped = wasCapped;
        }
        times.Sort();
        long calls = (grid.FileSize + block - 1) / block;
        return new TuneMeasurement(direction, buffer, block, calls, option, times[times.Count / 2], capped);
    }
}
