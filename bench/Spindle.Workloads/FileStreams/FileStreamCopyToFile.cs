using System.Runtime.CompilerServices;
namespace Spindle.Workloads.FileStreams;

/// <summary>
/// <c>CopyToFile</c> / <c>CopyToFileAsync</c> of dotnet/performance: a file stream copied into a new file
/// stream with <see cref="Stream.CopyTo(Stream)"/>, System.IO to System.IO and Spindle to Spindle.
/// </summary>
public sealed class FileStreamCopyToFile : Workload
{
    private readonly bool _async;
    private readonly long _fileSize;
    private readonly StreamFactory _source;
    private readonly StreamFactory _destination;
    private string _sourcePath = "";
    private string _systemIOPath = "";
    private string _spindlePath = "";

    /// <summary>Creates the row for a file of <paramref name="fileSize"/> bytes.</summary>
    public FileStreamCopyToFile(bool async, long fileSize)
        : base("FileStream", $"FileStream.CopyToFile{(async ? "Async" : "")}({Units.Bytes(fileSize)})")
    {
        _async = async;
        _fileSize = fileSize;
        FileOptions options = async ? FileOptions.Asynchronous : FileOptions.None;
        _source = new StreamFactory(FileMode.Open, FileAccess.Read, FileShare.Read, options, 4096);
        _destination = new StreamFactory(FileMode.Create, FileAccess.Write, FileShare.Read, options, 4096);
    }

    /// <inheritdoc />
    public override IReadOnlyList<Contender> Contenders => _async ? Workloads.Contenders.AllEngines : Workloads.Contenders.Synchronous;

    /// <inheritdoc />
    public override bool IsAsync => _async;

    /// <inheritdoc />
    public override void Setup(BenchFiles files)
    {
        _sourcePath = files.Source(_fileSize);
        files.EnsureFreeSpace(2 * _fileSize + (64 << 20));
        _systemIOPath = files.Target(Name + "-systemio");
        _spindlePath = files.Target(Name + "-spindle");
    }

    /// <inheritdoc />
    public override ValueTask RunAsync(Contender contender)
    {
        string target = contender == Contender.SystemIO ? _systemIOPath : _spindlePath;
        if (_async)
        {
            return CopyAsync(contender, target);
        }
        using Stream source = _source.Open(_sourcePath, contender);
        using Stream destination = _destination.Open(target, contender);
        source.CopyTo(destination);
        return ValueTask.CompletedTask;
    }

    // Pooled state machines: the benchmark itself allocates nothing per invocation, so the allocation columns are the API's.
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask CopyAsync(Contender contender, string target)
    {
        await using Stream source = _source.Open(_sourcePath, contender);
        await using Stream destination = _destination.Open(target, contender);
        await source.CopyToAsync(destination).ConfigureAwait(false);
    }
}
