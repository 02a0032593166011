namespace Spindle.Tests.Streams;

/// <summary>
/// Tests that read process-wide counters (Spindle's operation count, total allocated bytes) run alone,
/// so that other tests' I/O cannot change the numbers.
/// </summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class StreamMetricsCollection
{
    public const string Name = "Streams: process-wide counters";
}
