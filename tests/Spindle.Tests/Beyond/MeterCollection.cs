namespace Spindle.Tests.Beyond;

/// <summary>Tests that read the process-wide Spindle meter run alone, so that no other test's I/O is counted.</summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class MeterCollection
{
    public const string Name = "Beyond meter";
}
