using Spindle.Workloads;
using Spindle.Tool.Bench;
using Spindle.Tool.Cli;

namespace Spindle.Tool.Tune;

/// <summary>
/// The sweep: every buffer × block × option that applies to the direction, written and then read, timed;
/// then a final stage in which the fastest cells of each direction run again side by side, in rotating
/// rounds, so that drift hits them alike and each gets a median and an interval.
/// </summary>
public sealed class TuneSweep(TuneGrid grid, string path, ReadCase readCase = ReadCase.Warm)
{
    /// <summary>
    /// Runs the sweep, plus the rule-of-thumb combination, then the final stage; progress goes to
    /// <paramref name="progress"/>. Finalists come back with <see cref="TuneMeasurement.Final"/> set, in place
    /// of their sweep figures.
    /// </summary>
    public List<TuneMeasurement> Run((int Buffer, int Block)? ruleOfThumb, ProgressLine progress, CancellationToken cancellation)
    {
        var plan = new List<(Direction Direction, int Buffer, int Block, TuneOption Option)>();
        foreach (Direction direction in new[] { Direction.Write, Direction.Read })
        {
            foreach (TuneOption option in TuneOption.For(direction))
            {
                foreach (int buffer in grid.Buffers)
                {
                    foreach (int block in grid.Blocks)
                    {
                        plan.Add((direction, buffer, block, option));
                    }
                }
            }
            if (ruleOfThumb is { } rule)
            {
                plan.Add((direction, rule.Buffer, rule.Block, direction == Direction.Read ? TuneOption.SequentialScan : TuneOption.None));
            }
        }
        using var pass = new TunePass(path, grid.FileSize, grid.TimeCap, readCase);
        var results = new List<TuneMeasurement>();
        int finals = 2 * Math.Min(grid.Finalists, plan.Count / 2) * grid.FinalRounds;
        int total = plan.Count + finals, done = 0;
        bool fileForReads = false;
        foreach ((Direction direction, int buffer, int block, TuneOption option) in plan)
        {
            cancellation.ThrowIfCancellationRequested();
            if (direction == Direction.Read && !fileForReads)
            {
                pass.Write(1 << 20, 1 << 20, TuneOption.None);   // the file every read pass reads
                fileForReads = true;
            }
            progress.Report(done++, total, $"{direction,-5} buffer {Units.Bytes(buffer),8}  block {Units.Bytes(block),8}  {option.Name}");
            results.Add(Measure(pass, direction, buffer, block, option, grid.Repetitions));
        }

        // The final stage: the fastest cells of each direction, every one once per round, the order rotating.
        foreach (Direction direction in new[] { Direction.Write, Direction.Read })
        {
            List<TuneMeasurement> finalists = results.Where(r => r.Direction == direction && InGrid(r))
                .OrderBy(r => r.Time).Take(grid.Finalists).ToList();
            if (direction == Direction.Read)
            {
                pass.Write(1 << 20, 1 << 20, TuneOption.None);   // the write stage replaced the file
            }
            var times = finalists.Select(_ => new List<TimeSpan>()).ToList();
            var capped = new bool[finalists.Count];
            for (int round = 0; round < grid.FinalRounds; round++)
            {
                for (int k = 0; k < finalists.Count; k++)
                {
                    cancellation.ThrowIfCancellationRequested();
                    int i = (k + round) % finalists.Count;
                    TuneMeasurement f = finalists[i];
                    progress.Report(done++, total, $"final {direction,-5} round {round + 1} of {grid.FinalRounds}: buffer {Units.Bytes(f.Buffer)}  block {Units.Bytes(f.Block)}  {f.Option.Name}");
                    (TimeSpan time, bool wasCapped) = direction == Direction.Write ? pass.Write(f.Buffer, f.Block, f.Option) : pass.Read(f.Buffer, f.Block, f.Option);
                    times[i].Add(time);
                    capped[i] |= wasCapped;
                }
            }
            for (int i = 0; i < finalists.Count; i++)
            {
                results[results.IndexOf(finalists[i])] = Summarize(finalists[i], times[i], capped[i]) with { Final = true };
            }
        }
        progress.Clear();
        return results;
    }

    private bool InGrid(TuneMeasurement m) => grid.Buffers.Contains(m.Buffer) && grid.Blocks.Contains(m.Block);

    // Every combination runs, direct I/O included: the direct stream takes any buffer size and any block.
    private TuneMeasurement Measure(TunePass pass, Direction direction, int buffer, int block, TuneOption option, int repetitions)
    {
        var times = new List<TimeSpan>();
        bool capped = false;
        for (int i = 0; i < repetitions && !capped; i++)
        {
            (TimeSpan time, bool wasCapped) = direction == Direction.Write ? pass.Write(buffer, block, option) : pass.Read(buffer, block, option);
            times.Add(time);
            capped = wasCapped;
        }
        long calls = (grid.FileSize + block - 1) / block;
        return Summarize(new TuneMeasurement(direction, buffer, block, calls, option, TimeSpan.Zero, capped), times, capped);
    }

    private static TuneMeasurement Summarize(TuneMeasurement cell, List<TimeSpan> times, bool capped)
    {
        double[] ns = times.Select(t => t.TotalNanoseconds).ToArray();
        return cell with
        {
            Time = TimeSpan.FromTicks((long)(Harness.Median(ns) / 100)),
            Extrapolated = capped,
            Passes = ns.Length,
            Spread = ns.Length > 1 ? RatioEstimate.RelativeSpread(ns) : double.NaN,
        };
    }
}
