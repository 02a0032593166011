namespace Spindle.Workloads.FileStreams;

/// <summary>
/// <c>FileStream.Length</c> on an open stream. With <see cref="FileShare.Read"/> nobody else may write,
/// so the length can be cached; with <see cref="FileShare.ReadWrite"/> every call must ask the kernel.
/// </summary>
public sealed class FileStreamGetLength : Workload
{
    private readonly StreamFactory _factory;
    private Stream? _systemIO;
    private Stream? _spindle;

    /// <summary>Creates the row for streams opened with <paramref name="share"/>.</summary>
    public FileStreamGetLength(FileShare share)
        : base("FileStream", $"FileStream.GetLength(share {share})")
        => _factory = new StreamFactory(FileMode.Open, FileAccess.Read, share, FileOptions.None, 4096);

    /// <inheritdoc />
    public override IReadOnlyList<Contender> Contenders => Workloads.Contenders.Synchronous;

    /// <inheritdoc />
    public override void Setup(BenchFiles files)
    {
        string path = files.Source(1024);
        _systemIO = _factory.Open(path, Contender.SystemIO);
        _spindle = _factory.Open(path, Contender.SpindleAuto);
    }

    /// <inheritdoc />
    public override ValueTask RunAsync(Contender contender)
        => contender == Contender.SystemIO ? GetLength<SystemIOCode>(_systemIO!) : GetLength<SpindleCode>(_spindle!);

    // One compiled copy per stream type (CallSites.cs).
    private static ValueTask GetLength<TCode>(Stream stream)
        where TCode : struct
    {
        _ = stream.Length;
        return ValueTask.CompletedTask;
    }

    /// <inheritdoc />
    protected override void Dispose(bool disposing)
    {
        _systemIO?.Dispose();
        _spindle?.Dispose();
    }
}
