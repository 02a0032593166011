using System.Diagnostics;
using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;

namespace Spindle.Workloads.Beyond;

/// <summary>
/// Sequential O_DIRECT reads or writes of large blocks with a fixed number in flight, all contenders on
/// the same handle: block k goes to worker k mod depth, so the whole range is covered once per invocation.
/// The buffers are shared with fio where a memory file system allows (<see cref="SharedIoBuffers"/>):
/// on a virtio disk the physical layout of a buffer changes a request's cost more than any engine does.
/// </summary>
public sealed class SequentialDirect : Workload
{
    private readonly Direction _direction;
    private readonly long _size;
    private readonly int _blockSize;
    private readonly int _inFlight;
    private readonly ValueTask[] _workers;   // the workers of the running invocation
    private AlignedBuffer[] _buffers = [];   // this process's own buffers, when there is no memory file system to share
    private SharedIoBuffers? _shared;         // else buffers in pages fio uses too
    private SafeFileHandle? _handle;
    private string _path = "";

    /// <summary>Creates the row: <paramref name="size"/> bytes per invocation in blocks of <paramref name="blockSize"/>.</summary>
    public SequentialDirect(Direction direction, long size, int blockSize, int inFlight)
        : base("Beyond", $"Sequential{direction}.Direct({Units.Bytes(blockSize)}, QD {inFlight}, {Units.Bytes(size)})")
    {
        _direction = direction;
        _size = size;
        _blockSize = blockSize;
        _inFlight = inFlight;
        _workers = new ValueTask[inFlight];
    }

    /// <inheritdoc />
    public override IReadOnlyList<Contender> Contenders => Workloads.Contenders.AllEngines;

    /// <inheritdoc />
    public override bool IsAsync => true;

    /// <inheritdoc />
    public override bool RecordsLatency => true;

    /// <inheritdoc />
    public override int OperationsPerInvocation => (int)(_size / _blockSize);

    /// <inheritdoc />
    public override long CallsPerInvocation => OperationsPerInvocation;

    /// <inheritdoc />
    public override FioJob? Fio => new(_direction == Direction.Read ? "read" : "write", _blockSize, "io_uring", _inFlight, Direct: true, _path, _size)
    {
        IoMemoryFile = _shared?.Path,
    };

    /// <inheritdoc />
    public override void Setup(BenchFiles files)
    {
        if (_direction == Direction.Read)
        {
            _path = files.Source(_size);
        }
        else
        {
            files.EnsureFreeSpace(_size + (64 << 20));
            _path = files.Target(Name);
            using (SafeFileHandle create = File.OpenHandle(_path, FileMode.Create, FileAccess.Write, FileShare.None, FileOptions.None, _size))
            {
                System.IO.RandomAccess.SetLength(create, _size);
            }
        }
        _handle = DirectIo.OpenHandle(_path);
        _shared = SharedIoBuffers.TryCreate(files, _inFlight, _blockSize);
        if (_shared is null)
        {
            _buffers = new AlignedBuffer[_inFlight];
            for (int i = 0; i < _inFlight; i++)
            {
                _buffers[i] = new AlignedBuffer(_blockSize, DirectIo.Alignment);
            }
        }
    }

    private Memory<byte> Buffer(int worker) => _shared is { } shared ? shared[worker] : _buffers[worker].Memory;

    /// <inheritdoc />
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    public override async ValueTask RunAsync(Contender contender)
    {
        for (int i = 0; i < _inFlight; i++)
        {
            _workers[i] = _direction == Direction.Read ? Reader(contender, i) : Writer(contender, i);
        }
        // Awaited one by one: all are already running, and this allocates no Task.WhenAll.
        for (int i = 0; i < _workers.Length; i++)
        {
            await _workers[i].ConfigureAwait(false);
        }
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask Reader(Contender contender, int worker)
    {
        Memory<byte> buffer = Buffer(worker);
        LatencyRecorder? latencies = Latencies;
        for (long offset = (long)worker * _blockSize; offset < _size; offset += (long)_inFlight * _blockSize)
        {
            long started = latencies is null ? 0 : Stopwatch.GetTimestamp();
            _ = contender == Contender.SystemIO
                ? await System.IO.RandomAccess.ReadAsync(_handle!, buffer, offset).ConfigureAwait(false)
                : await SpindleRandomAccess.ReadAsync(_handle!, buffer, offset, contender.Engine()).ConfigureAwait(false);
            latencies?.Record(started);
        }
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask Writer(Contender contender, int worker)
    {
        ReadOnlyMemory<byte> buffer = Buffer(worker);
        LatencyRecorder? latencies = Latencies;
        for (long offset = (long)worker * _blockSize; offset < _size; offset += (long)_inFlight * _blockSize)
        {
            long started = latencies is null ? 0 : Stopwatch.GetTimestamp();
            if (contender == Contender.SystemIO)
            {
                await System.IO.RandomAccess.WriteAsync(_handle!, buffer, offset).ConfigureAwait(false);
            }
            else
            {
                await SpindleRandomAccess.WriteAsync(_handle!, buffer, offset, contender.Engine()).ConfigureAwait(false);
            }
            latencies?.Record(started);
        }
    }

    /// <inheritdoc />
    protected override void Dispose(bool disposing)
    {
        _handle?.Dispose();
        _shared?.Dispose();
        foreach (AlignedBuffer buffer in _buffers)
        {
            ((IDisposable)buffer).Dispose();
        }
    }
}
