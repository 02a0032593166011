namespace Spindle.Tests.Engines;

/// <summary>Tests that read process-wide counters (allocations, the meter) run alone.</summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class SerialCollection
{
    public const string Name = "Engines, alone";
}
