using System.Runtime.CompilerServices;
namespace Spindle.Workloads.RandomAccess;

/// <summary>
/// <c>RandomAccess.Read/Write</c> with several buffers per call (readv/writev), sync and async, over a
/// whole file: one invocation moves the file in calls of <c>count × size</c> bytes.
/// </summary>
public sealed class ScatterGather : Workload
{
    private readonly Direction _direction;
    private readonly bool _async;
    private readonly long _fileSize;
    private readonly int _bytesPerCall;
    private readonly Memory<byte>[] _readBuffers;
    private readonly ReadOnlyMemory<byte>[] _writeBuffers;
    private HandlePair? _handles;

    /// <summary>Creates the row: <paramref name="count"/> buffers of <paramref name="size"/> bytes over a file of <paramref name="fileSize"/>.</summary>
    public ScatterGather(Direction direction, bool async, int count, int size, long fileSize)
        : base("RandomAccess", $"RandomAccess.{(direction == Direction.Read ? "ReadScatter" : "WriteGather")}{(async ? "Async" : "")}({count}×{Units.Bytes(size)})")
    {
        _direction = direction;
        _async = async;
        _fileSize = fileSize;
        _bytesPerCall = count * size;
        _readBuffers = new Memory<byte>[count];
        _writeBuffers = new ReadOnlyMemory<byte>[count];
        for (int i = 0; i < count; i++)
        {
            byte[] buffer = new byte[size];
            Random.Shared.NextBytes(buffer);
            _readBuffers[i] = buffer;
            _writeBuffers[i] = buffer;
        }
    }

    /// <inheritdoc />
    public override IReadOnlyList<Contender> Contenders => _async ? Workloads.Contenders.AllEngines : Workloads.Contenders.Synchronous;

    /// <inheritdoc />
    public override bool IsAsync => _async;

    /// <inheritdoc />
    public override long CallsPerInvocation => (_fileSize + _bytesPerCall - 1) / _bytesPerCall;

    /// <inheritdoc />
    public override void Setup(BenchFiles files)
    {
        FileOptions options = _async ? FileOptions.Asynchronous : FileOptions.None;
        _handles = _direction == Direction.Read
            ? HandlePair.ForReading(files.Source(_fileSize), options)
            : HandlePair.ForWriting(files, Name, _fileSize, options);
    }

    /// <inheritdoc />
    public override ValueTask RunAsync(Contender contender)
    {
        if (_async)
        {
            return RunAllAsync(contender);
        }
        var handle = _handles!.For(contender);
        for (long offset = 0; offset < _fileSize; offset += _bytesPerCall)
        {
            switch (contender, _direction)
            {
                case (Contender.SystemIO, Direction.Read): System.IO.RandomAccess.Read(handle, _readBuffers, offset); break;
                case (Contender.SystemIO, Direction.Write): System.IO.RandomAccess.Write(handle, _writeBuffers, offset); break;
                case (_, Direction.Read): SpindleRandomAccess.Read(handle, _readBuffers, offset); break;
                default: SpindleRandomAccess.Write(handle, _writeBuffers, offset); break;
            }
        }
        return ValueTask.CompletedTask;
    }

    // Pooled state machines: the benchmark itself allocates nothing per invocation, so the allocation columns are the API's.
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask RunAllAsync(Contender contender)
    {
        var handle = _handles!.For(contender);
        for (long offset = 0; offset < _fileSize; offset += _bytesPerCall)
        {
            switch (contender, _direction)
            {
                case (Contender.SystemIO, Direction.Read): await System.IO.RandomAccess.ReadAsync(handle, _readBuffers, offset).ConfigureAwait(false); break;
                case (Contender.SystemIO, Direction.Write): await System.IO.RandomAccess.WriteAsync(handle, _writeBuffers, offset).ConfigureAwait(false); break;
                case (_, Direction.Read): await SpindleRandomAccess.ReadAsync(handle, _readBuffers, offset, contender.Engine()).ConfigureAwait(false); break;
                default: await SpindleRandomAccess.WriteAsync(handle, _writeBuffers, offset, contender.Engine()).ConfigureAwait(false); break;
            }
        }
    }

    /// <inheritdoc />
    protected override void Dispose(bool disposing) => _handles?.Dispose();
}
