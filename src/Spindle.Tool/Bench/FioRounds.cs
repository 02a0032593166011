using Spindle.Workloads;

namespace Spindle.Tool.Bench;

/// <summary>
/// fio run once per round of the harness, in the rotation with the contenders, so that its figure comes
/// from the same minutes of a shared machine as theirs (run once after the rounds, it measured another
/// moment's disk). The row's figure is the round with the median rate. With <c>enters</c>, each io_uring run
/// also counts its <c>io_uring_enter</c> calls (<see cref="PerfEnterCounter"/>).
/// </summary>
public sealed class FioRounds(string fio, FioJob job, TimeSpan runtime, PerfEnterCounter? enters = null)
{
    private readonly List<FioResult> _rounds = [];

    /// <summary>Why fio failed (its first complaint), or null; after a failure the remaining rounds skip fio.</summary>
    public string? Failure { get; private set; }

    /// <summary>Runs fio for one round; a failure is remembered, not thrown.</summary>
    public async Task RunAsync(CancellationToken cancellation)
    {
        if (Failure is not null)
        {
            return;
        }
        try
        {
            _rounds.Add(await FioRunner.RunAsync(fio, job, runtime, cancellation, enters).ConfigureAwait(false));
        }
        catch (Exception e) when (e is InvalidOperationException or System.Text.Json.JsonException or System.ComponentModel.Win32Exception or KeyNotFoundException)
        {
            Failure = "fio failed: " + e.Message;
        }
    }

    /// <summary>The round with the median rate (the lower of the two middle ones for an even count), or null when none ran.</summary>
    public FioResult? Median
    {
        get
        {
            if (_rounds.Count == 0)
            {
                return null;
            }
            FioResult[] sorted = [.. _rounds.OrderBy(r => r.Iops)];
            return sorted[(sorted.Length - 1) / 2];
        }
    }
}
