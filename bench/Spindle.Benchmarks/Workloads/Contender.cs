namespace Spindle.Benchmarks.Workloads;

/// <summary>Who performs a workload's operation: System.IO, or Spindle on one of its engines.</summary>
public enum Contender
{
    /// <summary>The baseline: <see cref="System.IO.FileStream"/> or <see cref="System.IO.RandomAccess"/>.</summary>
    SystemIO,

    /// <summary>Spindle on the Sync engine; also the column of synchronous rows, where no engine is involved.</summary>
    SpindleSync,

    /// <summary>Spindle on the ThreadPool engine.</summary>
    SpindleThreadPool,

    /// <summary>Spindle on the io_uring engine.</summary>
    SpindleIoUring,
}

/// <summary>Names and engines of the contenders.</summary>
public static class Contenders
{
    /// <summary>System.IO and Spindle's synchronous path: the contenders of every synchronous row.</summary>
    public static readonly IReadOnlyList<Contender> Synchronous = [Contender.SystemIO, Contender.SpindleSync];

    /// <summary>System.IO and every Spindle engine: the contenders of every asynchronous row.</summary>
    public static readonly IReadOnlyList<Contender> AllEngines =
        [Contender.SystemIO, Contender.SpindleSync, Contender.SpindleThreadPool, Contender.SpindleIoUring];

    /// <summary>The Spindle contenders, in column order.</summary>
    public static readonly IReadOnlyList<Contender> SpindleColumns =
        [Contender.SpindleSync, Contender.SpindleThreadPool, Contender.SpindleIoUring];

    /// <summary>The engine a Spindle contender runs on.</summary>
    public static IoEngine Engine(this Contender contender) => contender switch
    {
        Contender.SpindleSync => IoEngine.Sync,
        Contender.SpindleThreadPool => IoEngine.ThreadPool,
        Contender.SpindleIoUring => IoEngine.IoUring,
        _ => throw new ArgumentOutOfRangeException(nameof(contender), contender, "System.IO has no Spindle engine."),
    };

    /// <summary>The column title of a contender.</summary>
    public static string Title(this Contender contender) => contender switch
    {
        Contender.SystemIO => "System.IO",
        Contender.SpindleSync => "Spindle Sync",
        Contender.SpindleThreadPool => "Spindle ThreadPool",
        Contender.SpindleIoUring => "Spindle IoUring",
        _ => contender.ToString(),
    };
}
