using BenchmarkDotNet.Running;

namespace Spindle.Benchmarks;

/// <summary>
/// The rigorous suite: BenchmarkDotNet over the same workloads that <c>spindle bench</c> runs.
/// <c>dotnet run -c Release --project bench/Spindle.Benchmarks -- --filter '*'</c>; files go to
/// <c>SPINDLE_BENCH_DIR</c> or the temp directory.
/// </summary>
public static class Program
{
    /// <summary>Runs the benchmarks chosen by the BenchmarkDotNet command line.</summary>
    public static void Main(string[] args) => BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args);
}
