namespace Spindle.Workloads;

/// <summary>Who performs a workload's operation: System.IO, or Spindle on one of its engines.</summary>
public enum Contender
{
    /// <summary>The baseline: <see cref="System.IO.FileStream"/> or <see cref="System.IO.RandomAccess"/>.</summary>
    SystemIO,

    /// <summary>
    /// Spindle as a user gets it without configuring anything: <see cref="IoEngine.Auto"/>, which resolves to
    /// <see cref="SpindleRandomAccess.DefaultEngine"/>; the only Spindle column of synchronous rows. The headline of every report.
    /// </summary>
    SpindleAuto,

    /// <summary>Spindle on the Sync engine.</summary>
    SpindleSync,

    /// <summary>Spindle on the ThreadPool engine.</summary>
    SpindleThreadPool,

    /// <summary>Spindle on the io_uring engine.</summary>
    SpindleIoUring,
}

/// <summary>Names and engines of the contenders.</summary>
public static class Contenders
{
    /// <summary>System.IO and Spindle with its defaults: the contenders of every synchronous row (no engine is involved there).</summary>
    public static readonly IReadOnlyList<Contender> Synchronous = [Contender.SystemIO, Contender.SpindleAuto];

    /// <summary>System.IO, Spindle's default and every Spindle engine by name: the contenders of every asynchronous row.</summary>
    public static readonly IReadOnlyList<Contender> AllEngines =
        [Contender.SystemIO, Contender.SpindleAuto, Contender.SpindleSync, Contender.SpindleThreadPool, Contender.SpindleIoUring];

    /// <summary>The Spindle contenders, in column order: the default first, then each engine by name.</summary>
    public static readonly IReadOnlyList<Contender> SpindleColumns =
        [Contender.SpindleAuto, Contender.SpindleSync, Contender.SpindleThreadPool, Contender.SpindleIoUring];

    /// <summary>The Spindle engines named explicitly (every Spindle column but the default).</summary>
    public static readonly IReadOnlyList<Contender> NamedEngines =
        [Contender.SpindleSync, Contender.SpindleThreadPool, Contender.SpindleIoUring];

    /// <summary>The engine a Spindle contender runs on.</summary>
    public static IoEngine Engine(this Contender contender) => contender switch
    {
        Contender.SpindleAuto => IoEngine.Auto,
        Contender.SpindleSync => IoEngine.Sync,
        Contender.SpindleThreadPool => IoEngine.ThreadPool,
        Contender.SpindleIoUring => IoEngine.IoUring,
        _ => throw new ArgumentOutOfRangeException(nameof(contender), contender, "System.IO has no Spindle engine."),
    };

    /// <summary>The column title of a contender.</summary>
    public static string Title(this Contender contender) => contender switch
    {
        Contender.SystemIO => "System.IO",
        Contender.SpindleAuto => "Spindle Auto",
        Contender.SpindleSync => "Spindle Sync",
        Contender.SpindleThreadPool => "Spindle ThreadPool",
        Contender.SpindleIoUring => "Spindle IoUring",
        _ => contender.ToString(),
    };
}
