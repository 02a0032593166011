namespace Spindle.Tool.Bench;

/// <summary>How long the harness measures each row.</summary>
/// <param name="Rounds">Rounds per contender; every round runs every contender once, in a rotating order.</param>
/// <param name="WarmupTime">Time each contender runs before measuring (JIT, tiering, page cache, thread pool).</param>
/// <param name="RoundTime">Target time of one contender's batch in a round; a batch is at least one invocation.</param>
/// <param name="FioTime">fio's <c>--runtime</c> in each round, for rows that have a fio figure.</param>
public sealed record HarnessSettings(int Rounds, TimeSpan WarmupTime, TimeSpan RoundTime, TimeSpan FioTime)
{
    /// <summary>The full run (a few minutes for the whole matrix).</summary>
    public static HarnessSettings Full { get; } = new(9, TimeSpan.FromMilliseconds(150), TimeSpan.FromMilliseconds(40), TimeSpan.FromSeconds(1));

    /// <summary>About a minute for the whole matrix.</summary>
    public static HarnessSettings Quick { get; } = new(5, TimeSpan.FromMilliseconds(20), TimeSpan.FromMilliseconds(8), TimeSpan.FromMilliseconds(250));
}
