namespace Spindle.Workloads.FileStreams;

/// <summary>
/// <c>SeekForward</c> / <c>SeekBackward</c> of dotnet/performance: a stream over a 1 KiB file seeks to
/// every offset in turn and reads the byte there; one invocation opens, walks the file and disposes.
/// </summary>
public sealed class FileStreamSeek : Workload
{
    private const int FileSize = 1024;
    private readonly bool _forward;
    private readonly StreamFactory _factory;
    private string _path = "";

    /// <summary>Creates the row.</summary>
    public FileStreamSeek(bool forward, FileOptions options)
        : base("FileStream", $"FileStream.Seek{(forward ? "Forward" : "Backward")}(1 KiB, {options})")
    {
        _forward = forward;
        _factory = new StreamFactory(FileMode.Open, FileAccess.Read, FileShare.Read, options, 4096);
        IsAsync = (options & FileOptions.Asynchronous) != 0;
    }

    /// <inheritdoc />
    public override IReadOnlyList<Contender> Contenders => Workloads.Contenders.Synchronous;

    /// <inheritdoc />
    public override bool IsAsync { get; }

    /// <inheritdoc />
    public override void Setup(BenchFiles files) => _path = files.Source(FileSize);

    /// <inheritdoc />
    public override ValueTask RunAsync(Contender contender)
        => contender == Contender.SystemIO ? Walk<SystemIOCode>(contender) : Walk<SpindleCode>(contender);

    // One compiled copy per stream type (CallSites.cs).
    private ValueTask Walk<TCode>(Contender contender)
        where TCode : struct
    {
        using Stream stream = _factory.Open(_path, contender);
        if (_forward)
        {
            for (long offset = 0; offset < FileSize; offset++)
            {
                stream.Seek(offset, SeekOrigin.Begin);
                stream.ReadByte();
            }
        }
        else
        {
            for (long offset = -1; offset >= -FileSize; offset--)
            {
                stream.Seek(offset, SeekOrigin.End);
                stream.ReadByte();
            }
        }
        return ValueTask.CompletedTask;
    }
}
