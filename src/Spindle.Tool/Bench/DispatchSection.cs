using Spindle.Tool.Cli;
using Spindle.Workloads;
using Spindle.Workloads.Dispatch;

namespace Spindle.Tool.Bench;

/// <summary>
/// The dispatch section of <c>spindle bench</c>: calibrates the continuation's spin, sets up each storage
/// on first use, measures every selected cell (the all-cores cells in this process, the one-core cells
/// in a child pinned to one CPU, each right after its partner) and tears the storages down, also when
/// the run is stopped. A cell whose Auto reads less than 0.97× System.IO's is measured again with
/// <see cref="ConfirmationRoundsFactor"/> times the rounds, and that measurement stands.
/// </summary>
public static class DispatchSection
{
    /// <summary>
    /// The cells <paramref name="filter"/> selects from the whole matrix; without a filter, the whole
    /// matrix or, for <c>--quick</c>, its small subset.
    /// </summary>
    public static IReadOnlyList<DispatchCell> Select(bool quick, string? filter) =>
        [.. DispatchMatrix.Build(quick && string.IsNullOrWhiteSpace(filter)).Where(c => new RowFilter(filter).Matches(c.Name))];

    /// <summary>Measures <paramref name="cells"/>; storages go in <paramref name="files"/>' directory (the disk) or on tmpfs and zram.</summary>
    public static async Task<DispatchMatrixResult> RunAsync(IReadOnlyList<DispatchCell> cells, DispatchSettings settings, BenchFiles files,
        string? fio, string noFio, ToolConsole console)
    {
        double rate = CpuSpin.Calibrate();
        double check = CpuSpin.Check(100, rate);
        var results = new List<DispatchCellResult>();
        ProgressLine progress = console.Progress();
        using var volumes = new DispatchVolumes(files, settings.FileSize);
        try
        {
            for (int i = 0; i < cells.Count; i++)
            {
                DispatchCell cell = cells[i];
                progress.Report(i, cells.Count, $"dispatch cell {i + 1} of {cells.Count}: {cell.Name}");
                DispatchTarget target;
                try
                {
                    target = volumes.Prepare(cell.Storage);
                }
                catch (NotSupportedException e)
                {
                    results.Add(new DispatchCellResult { Cell = cell, Skipped = e.Message });
                    continue;
                }
                DispatchCellResult result = await MeasureAsync(cell, target, settings, rate, fio, noFio, console).ConfigureAwait(false);
                if (ReadsBelowSystemIO(result))
                {
                    // A miss measured in a few short rounds is as likely the machine's noise as the engine's: the cell is
                    // measured again, longer, and that measurement stands (the first one's ratio is kept beside it).
                    progress.Report(i, cells.Count, $"dispatch cell {i + 1} of {cells.Count}: {cell.Name}, measured again ({result.Ratio:0.00})");
                    DispatchCellResult again = await MeasureAsync(cell, target, settings with { Rounds = settings.Rounds * ConfirmationRoundsFactor }, rate, fio, noFio, console).ConfigureAwait(false);
                    result = again with { FirstPassRatio = result.Ratio };
                }
                results.Add(result);
            }
        }
        finally
        {
            progress.Clear();
        }
        return new DispatchMatrixResult { Cells = results, Settings = settings, SpinIterationsPerMicrosecond = rate, SpinCheckNs = check };
    }

    /// <summary>How many times the rounds a cell below 0.97× System.IO's is measured again with.</summary>
    public const int ConfirmationRoundsFactor = 3;

    private static Task<DispatchCellResult> MeasureAsync(DispatchCell cell, DispatchTarget target, DispatchSettings settings, double rate,
        string? fio, string noFio, ToolConsole console) => cell.OneCore
            ? DispatchChild.MeasureAsync(new DispatchChild.Request(cell, target, settings, rate, fio, noFio), console.Cancellation)
            : DispatchRunner.MeasureAsync(cell, target, settings, rate, fio, noFio, console.Cancellation);

    // Auto below System.IO by more than the difference a run here claims to resolve (the targets' own floor is 0.97
    // near the limit, 1.00 elsewhere; between the two a second measurement would cost more than it tells).
    private static bool ReadsBelowSystemIO(DispatchCellResult result)
        => result.Skipped is null && result.Ratio < 1 - RatioEstimate.TieBand;
}
