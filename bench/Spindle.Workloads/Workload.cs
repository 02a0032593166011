namespace Spindle.Workloads;

/// <summary>
/// One row of the benchmark matrix: an operation that System.IO and Spindle both perform, defined once
/// and run by BenchmarkDotNet (the suites) and by <c>spindle bench</c> (the tool's own harness).
/// </summary>
/// <remarks>
/// Life cycle: <see cref="Setup"/> once (creates the files), then any number of <see cref="RunAsync"/>
/// calls for any contender in any order, then <see cref="Dispose()"/> (closes handles; the files belong
/// to the <see cref="BenchFiles"/> passed to setup and go when it is disposed).
/// </remarks>
public abstract class Workload : IDisposable
{
    /// <summary>Creates a row.</summary>
    /// <param name="group">The section of the matrix: FileStream, RandomAccess or Beyond.</param>
    /// <param name="name">The row's name, unique in the matrix, with its parameters.</param>
    protected Workload(string group, string name)
    {
        Group = group;
        Name = name;
    }

    /// <summary>The section of the matrix: FileStream, RandomAccess or Beyond.</summary>
    public string Group { get; }

    /// <summary>The row's name with its parameters, e.g. <c>RandomAccess.ReadAsync(1 MiB, 4 KiB)</c>.</summary>
    public string Name { get; }

    /// <summary>Who runs this row; the first is the baseline.</summary>
    public abstract IReadOnlyList<Contender> Contenders { get; }

    /// <summary>True for ReadAsync/WriteAsync rows and rows opened with <see cref="FileOptions.Asynchronous"/> (SPEC §6: target ratio 0.50).</summary>
    public virtual bool IsAsync => false;

    /// <summary>How many operations one <see cref="RunAsync"/> performs; times and allocations are reported per operation.</summary>
    public virtual int OperationsPerInvocation => 1;

    /// <summary>
    /// How many I/O calls one <see cref="RunAsync"/> makes (Read/Write/ReadAsync/WriteAsync calls on the
    /// API under test), or 0 when the row is not a loop of calls; used for allocations per call.
    /// </summary>
    public virtual long CallsPerInvocation => 0;

    /// <summary>
    /// True for rows that record each operation's latency into <see cref="Latencies"/> (the random-read
    /// and sequential rows, whose operations are single reads or writes).
    /// </summary>
    public virtual bool RecordsLatency => false;

    /// <summary>
    /// Where the running invocations record each operation's latency, or null (warm-up, BenchmarkDotNet):
    /// set by the harness around its measured batches, read by the row at the start of each invocation.
    /// </summary>
    public LatencyRecorder? Latencies { get; set; }

    /// <summary>The fio job that gives this row's physical limit, or null when fio has nothing to compare.</summary>
    public virtual FioJob? Fio => null;

    /// <summary>A system command timed as this row's reference where fio has no job, or null.</summary>
    public virtual ReferenceCommand? Reference => null;

    /// <summary>Creates the files the row needs and opens what stays open across invocations.</summary>
    public abstract void Setup(BenchFiles files);

    /// <summary>Performs <see cref="OperationsPerInvocation"/> operations as <paramref name="contender"/>.</summary>
    public abstract ValueTask RunAsync(Contender contender);

    /// <summary>Closes what <see cref="Setup"/> opened.</summary>
    public void Dispose()
    {
        Dispose(disposing: true);
        GC.SuppressFinalize(this);
    }

    /// <summary>Closes what <see cref="Setup"/> opened.</summary>
    protected virtual void Dispose(bool disposing)
    {
    }

    /// <inheritdoc />
    public override string ToString() => Name;
}
