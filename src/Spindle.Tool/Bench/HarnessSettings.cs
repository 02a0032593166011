namespace Spindle.Tool.Bench;

/// <summary>How long the harness measures each row.</summary>
/// <param name="Rounds">Rounds per contender; every round runs every contender once, in a rotating order.</param>
/// <param name="WarmupTime">
/// Least time each contender runs before measuring (JIT tiers, page cache, thread pool); the pilot stage goes on
/// until two batches agree within 5 %, for at most four times this.
/// </param>
/// <param name="RoundTime">Target time of one contender's batch in a round; a batch is at least one invocation.</param>
/// <param name="FioTime">fio's <c>--runtime</c> in each round, for rows that have a fio figure.</param>
public sealed record HarnessSettings(int Rounds, TimeSpan WarmupTime, TimeSpan RoundTime, TimeSpan FioTime)
{
    /// <summary>True to run a short batch again when the scheduler switched one of the process's threads out during it.</summary>
    public bool RetryPreempted { get; init; }

    /// <summary>Rounds in which fio (or another outsider) takes its turn, spread evenly over the rounds.</summary>
    public int OutsiderRounds { get; init; } = Rounds;

    /// <summary>Most rounds System.IO and Auto run when the stability stage adds rounds to settle a row's verdict.</summary>
    public int MaxRounds { get; init; } = Rounds;

    /// <summary>Most time the stability stage spends on one row (the command may allow less to keep its total budget).</summary>
    public TimeSpan StabilityTime { get; init; } = TimeSpan.Zero;

    /// <summary>The time the whole matrix is planned to take (warm-up, rounds, fio and the stability stage); stated in the help.</summary>
    public TimeSpan Budget { get; init; } = TimeSpan.Zero;

    // Many short rounds rather than a few long ones: on a busy machine a batch shorter than a time slice often runs
    // undisturbed, and the median of many rounds (with its interval from their order) ignores the disturbed ones.

    /// <summary>The full run: 21 rounds (fio in 7), up to 61 to settle a verdict.</summary>
    public static HarnessSettings Full { get; } = new(21, TimeSpan.FromMilliseconds(150), TimeSpan.FromMilliseconds(10), TimeSpan.FromSeconds(1))
    {
        OutsiderRounds = 7,
        MaxRounds = 61,
        RetryPreempted = true,
        StabilityTime = TimeSpan.FromSeconds(4),
        Budget = TimeSpan.FromMinutes(10),
    };

    /// <summary>The quick run: shrunk files, 15 rounds (fio in 5), up to 45 to settle a verdict.</summary>
    public static HarnessSettings Quick { get; } = new(15, TimeSpan.FromMilliseconds(30), TimeSpan.FromMilliseconds(2), TimeSpan.FromMilliseconds(200))
    {
        OutsiderRounds = 5,
        MaxRounds = 45,
        RetryPreempted = true,
        StabilityTime = TimeSpan.FromSeconds(1),
        Budget = TimeSpan.FromMinutes(2),
    };
}
