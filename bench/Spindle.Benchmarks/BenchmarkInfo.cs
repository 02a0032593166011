namespace Spindle.Benchmarks;

/// <summary>Where the benchmark suite lives.</summary>
public static class BenchmarkInfo
{
    /// <summary>The name of the suite.</summary>
    public const string Name = "Spindle benchmarks";
}
