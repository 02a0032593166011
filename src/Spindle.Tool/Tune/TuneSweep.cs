using Spindle.Benchmarks.Workloads;
using Spindle.Tool.Cli;

namespace Spindle.Tool.Tune;

/// <summary>Seed 003's experiment: every buffer × block × option, written and then read, timed.</summary>
public sealed class TuneSweep(TuneGrid grid, string path)
{
    /// <summary>Combinations that could not run (direct I/O with a block the file system cannot take), with why.</summary>
    public List<string> Skipped { get; } = new();

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
                TuneMeasurement? measured = Measure(pass, direction, buffer, block, option);
                if (measured is not null)
                {
                    results.Add(measured);
                }
            }
        }
        progress.Clear();
        return results;
    }

    private TuneMeasurement? Measure(TunePass pass, Direction direction, int buffer, int block, TuneOption option)
    {
        var times = new List<TimeSpan>();
        bool capped = false;
        try
        {
            for (int i = 0; i < grid.Repetitions && !capped; i++)
            {
                (TimeSpan time, bool wasCapped) = direction == Direction.Write ? pass.Write(buffer, block, option) : pass.Read(buffer, block, option);
                times.Add(time);
                capped = wasCapped;
            }
        }
        catch (Exception e) when (option.Direct && e is ArgumentException or IOException)
        {
            Skipped.Add($"{direction} buffer {Units.Bytes(buffer)} block {Units.Bytes(block)} {option.Name}: {e.Message}");
            return null;
        }
        times.Sort();
        long calls = (grid.FileSize + block - 1) / block;
        return new TuneMeasurement(direction, buffer, block, calls, option, times[times.Count / 2], capped);
    }
}
