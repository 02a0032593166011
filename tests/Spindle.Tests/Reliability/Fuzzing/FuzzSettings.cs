namespace Spindle.Tests.Reliability.Fuzzing;

/// <summary>
/// How many programs the fuzzer runs and from which seed: a CI-sized default, or a soak set by
/// <c>SPINDLE_FUZZ_PROGRAMS</c> and <c>SPINDLE_FUZZ_SEED</c>. Program <c>i</c> runs with seed
/// <c>Seed + i</c>, so one failing program replays alone with its own seed and a count of 1.
/// </summary>
public sealed record FuzzSettings(int Programs, long Seed)
{
    public const long DefaultSeed = 20_261_123;

    public static FuzzSettings FromEnvironment(int ciPrograms) => new(
        int.TryParse(Environment.GetEnvironmentVariable("SPINDLE_FUZZ_PROGRAMS"), out int programs) && programs > 0 ? programs : ciPrograms,
        long.TryParse(Environment.GetEnvironmentVariable("SPINDLE_FUZZ_SEED"), out long seed) ? seed : DefaultSeed);

    /// <summary>Whether the programs to run were chosen by the environment (a soak or a replay).</summary>
    public static bool FromUser => Environment.GetEnvironmentVariable("SPINDLE_FUZZ_PROGRAMS") is not null || Environment.GetEnvironmentVariable("SPINDLE_FUZZ_SEED") is not null;

    public static string ReplayCommand(long programSeed, string testName) =>
        $"SPINDLE_FUZZ_SEED={programSeed} SPINDLE_FUZZ_PROGRAMS=1 ./test.sh --filter \"FullyQualifiedName~{testName}\"";
}

/// <summary>Totals of one fuzzing run, printed by the test and quoted in docs/reliability.md.</summary>
public sealed class FuzzTotals
{
    private long _programs;
    private long _operations;
    private long _comparisons;

    public long Programs => Interlocked.Read(ref _programs);

    public long Operations => Interlocked.Read(ref _operations);

    public long Comparisons => Interlocked.Read(ref _comparisons);

    private long _exceptions;

    /// <summary>Steps where System.IO threw (or failed the task), so that the exception types were compared.</summary>
    public long Exceptions => Interlocked.Read(ref _exceptions);

    public void AddException() => Interlocked.Increment(ref _exceptions);

    public void AddProgram() => Interlocked.Increment(ref _programs);

    public void AddOperation(int sides) 
    {
        Interlocked.Increment(ref _operations);
        Interlocked.Add(ref _comparisons, sides);
    }
}

/// <summary>A difference between System.IO and Spindle, with everything needed to replay it.</summary>
public sealed class FuzzDifference(string message) : Exception(message);
