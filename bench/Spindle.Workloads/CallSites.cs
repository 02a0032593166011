namespace Spindle.Workloads;

/// <summary>
/// Type arguments that give System.IO's and Spindle's streams a compiled copy each of a workload's loop. The JIT compiles
/// a generic method once per value-type argument, so each copy's calls on a <see cref="Stream"/> see one stream type, as an
/// application's call sites do, and profile-guided devirtualization serves both. One loop shared by both types serves
/// the type its profile saw more and makes the other pay a virtual call per call (docs/benchmarks.md, "One call site per
/// stream type").
/// </summary>
public readonly struct SystemIOCode
{
}

/// <summary>The Spindle columns' copy of a workload's loop (<see cref="SystemIOCode"/>).</summary>
public readonly struct SpindleCode
{
}
