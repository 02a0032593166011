using System.Runtime.CompilerServices;
namespace Spindle.Workloads.FileStreams;

/// <summary>
/// <c>FileStream.Read/Write/ReadAsync/WriteAsync</c> of a whole file with a user buffer of one size, as
/// in dotnet/performance's <c>Perf.FileStream</c> and seed 001: one invocation opens the stream, moves
/// the whole file and disposes the stream.
/// </summary>
public sealed class FileStreamTransfer : Workload
{
    private readonly Direction _direction;
    private readonly bool _async;
    private readonly long _fileSize;
    private readonly byte[] _buffer;
    private readonly StreamFactory _factory;
    private string _systemIOPath = "";
    private string _spindlePath = "";

    /// <summary>Creates the row.</summary>
    /// <param name="direction">Read an existing file or write a new one.</param>
    /// <param name="async">Use ReadAsync/WriteAsync instead of Read/Write.</param>
    /// <param name="fileSize">The bytes moved per invocation.</param>
    /// <param name="userBufferSize">The bytes per Read/Write call.</param>
    /// <param name="options">The stream's <see cref="FileOptions"/>.</param>
    /// <param name="bufferSize">The stream's buffer; 0 disables buffering (the <c>_NoBuffering</c> rows).</param>
    /// <param name="preallocationSize">The stream's preallocation size for writes (the preallocated rows).</param>
    /// <param name="name">A name instead of the generated one (seed 001's rows).</param>
    public FileStreamTransfer(Direction direction, bool async, long fileSize, int userBufferSize, FileOptions options,
        int bufferSize = 4096, long preallocationSize = 0, string? name = null)
        : base("FileStream", name ?? RowName(direction, async, fileSize, userBufferSize, options, bufferSize, preallocationSize))
    {
        _direction = direction;
        _async = async;
        _fileSize = fileSize;
        _buffer = new byte[userBufferSize];
        Random.Shared.NextBytes(_buffer);
        _factory = direction == Direction.Read
            ? new StreamFactory(FileMode.Open, FileAccess.Read, FileShare.Read, options, bufferSize)
            : new StreamFactory(FileMode.Create, FileAccess.Write, FileShare.Read, options, bufferSize, preallocationSize);
        IsAsync = async || (options & FileOptions.Asynchronous) != 0;
    }

    /// <inheritdoc />
    public override IReadOnlyList<Contender> Contenders => _async ? Workloads.Contenders.AllEngines : Workloads.Contenders.Synchronous;

    /// <inheritdoc />
    public override bool IsAsync { get; }

    /// <inheritdoc />
    public override void Setup(BenchFiles files)
    {
        if (_direction == Direction.Read)
        {
            _systemIOPath = _spindlePath = files.Source(_fileSize);
        }
        else
        {
            files.EnsureFreeSpace(2 * _fileSize + (64 << 20));
            _systemIOPath = files.Target(Name + "-systemio");
            _spindlePath = files.Target(Name + "-spindle");
        }
    }

    /// <inheritdoc />
    public override ValueTask RunAsync(Contender contender)
        => contender == Contender.SystemIO ? Run<SystemIOCode>(_systemIOPath, contender) : Run<SpindleCode>(_spindlePath, contender);

    // One compiled copy per stream type (CallSites.cs).
    private ValueTask Run<TCode>(string path, Contender contender)
        where TCode : struct
    {
        if (_async)
        {
            return _direction == Direction.Read ? ReadAsync<TCode>(path, contender) : WriteAsync<TCode>(path, contender);
        }
        using Stream stream = _factory.Open(path, contender);
        if (_direction == Direction.Read)
        {
            while (stream.Read(_buffer, 0, _buffer.Length) > 0)
            {
            }
        }
        else
        {
            for (long written = 0; written < _fileSize; written += _buffer.Length)
            {
                stream.Write(_buffer, 0, (int)Math.Min(_buffer.Length, _fileSize - written));
            }
        }
        return ValueTask.CompletedTask;
    }

    // Pooled state machines: the benchmark itself allocates nothing per invocation, so the allocation columns are the API's.
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask ReadAsync<TCode>(string path, Contender contender)
        where TCode : struct
    {
        await using Stream stream = _factory.Open(path, contender);
        Memory<byte> buffer = _buffer;
        while (await stream.ReadAsync(buffer).ConfigureAwait(false) > 0)
        {
        }
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask WriteAsync<TCode>(string path, Contender contender)
        where TCode : struct
    {
        await using Stream stream = _factory.Open(path, contender);
        ReadOnlyMemory<byte> buffer = _buffer;
        for (long written = 0; written < _fileSize; written += buffer.Length)
        {
            await stream.WriteAsync(buffer[..(int)Math.Min(buffer.Length, _fileSize - written)]).ConfigureAwait(false);
        }
    }

    private static string RowName(Direction direction, bool async, long fileSize, int userBufferSize, FileOptions options, int bufferSize, long preallocationSize)
    {
        string suffix = (bufferSize == 0 ? "_NoBuffering" : "") + (preallocationSize > 0 ? "_Preallocated" : "");
        return $"FileStream.{direction}{(async ? "Async" : "")}{suffix}({Units.Bytes(fileSize)}, {Units.Bytes(userBufferSize)}, {options})";
    }
}
