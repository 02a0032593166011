using System.Runtime.CompilerServices;
namespace Spindle.Workloads.RandomAccess;

/// <summary>
/// <c>RandomAccess.Read/Write/ReadAsync/WriteAsync</c> over a whole file in blocks of one size, as in
/// dotnet/performance's <c>Perf.RandomAccess</c>: one invocation moves the whole file.
/// </summary>
public sealed class RandomAccessTransfer : Workload
{
    private readonly Direction _direction;
    private readonly bool _async;
    private readonly long _fileSize;
    private readonly byte[] _buffer;
    private HandlePair? _handles;

    /// <summary>Creates the row for a file of <paramref name="fileSize"/> bytes moved in blocks of <paramref name="blockSize"/>.</summary>
    public RandomAccessTransfer(Direction direction, bool async, long fileSize, int blockSize)
        : base("RandomAccess", $"RandomAccess.{direction}{(async ? "Async" : "")}({Units.Bytes(fileSize)}, {Units.Bytes(blockSize)})")
    {
        _direction = direction;
        _async = async;
        _fileSize = fileSize;
        _buffer = new byte[blockSize];
        Random.Shared.NextBytes(_buffer);
    }

    /// <inheritdoc />
    public override IReadOnlyList<Contender> Contenders => _async ? Workloads.Contenders.AllEngines : Workloads.Contenders.Synchronous;

    /// <inheritdoc />
    public override bool IsAsync => _async;

    /// <inheritdoc />
    public override long CallsPerInvocation => (_fileSize + _buffer.Length - 1) / _buffer.Length;

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
            return _direction == Direction.Read ? ReadAllAsync(contender) : WriteAllAsync(contender);
        }
        if (_direction == Direction.Read)
        {
            ReadAll(contender);
        }
        else
        {
            WriteAll(contender);
        }
        return ValueTask.CompletedTask;
    }

    private void ReadAll(Contender contender)
    {
        var handle = _handles!.For(contender);
        for (long offset = 0; offset < _fileSize; offset += _buffer.Length)
        {
            _ = contender == Contender.SystemIO
                ? System.IO.RandomAccess.Read(handle, _buffer, offset)
                : SpindleRandomAccess.Read(handle, _buffer, offset);
        }
    }

    private void WriteAll(Contender contender)
    {
        var handle = _handles!.For(contender);
        for (long offset = 0; offset < _fileSize; offset += _buffer.Length)
        {
            if (contender == Contender.SystemIO)
            {
                System.IO.RandomAccess.Write(handle, _buffer, offset);
            }
            else
            {
                SpindleRandomAccess.Write(handle, _buffer, offset);
            }
        }
    }

    // Pooled state machines: the benchmark itself allocates nothing per invocation, so the allocation columns are the API's.
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask ReadAllAsync(Contender contender)
    {
        var handle = _handles!.For(contender);
        for (long offset = 0; offset < _fileSize; offset += _buffer.Length)
        {
            _ = contender == Contender.SystemIO
                ? await System.IO.RandomAccess.ReadAsync(handle, _buffer, offset).ConfigureAwait(false)
                : await SpindleRandomAccess.ReadAsync(handle, _buffer, offset, contender.Engine()).ConfigureAwait(false);
        }
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask WriteAllAsync(Contender contender)
    {
        var handle = _handles!.For(contender);
        for (long offset = 0; offset < _fileSize; offset += _buffer.Length)
        {
            if (contender == Contender.SystemIO)
            {
                await System.IO.RandomAccess.WriteAsync(handle, _buffer, offset).ConfigureAwait(false);
            }
            else
            {
                await SpindleRandomAccess.WriteAsync(handle, _buffer, offset, contender.Engine()).ConfigureAwait(false);
            }
        }
    }

    /// <inheritdoc />
    protected override void Dispose(bool disposing) => _handles?.Dispose();
}
