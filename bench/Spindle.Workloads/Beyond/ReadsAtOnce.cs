using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;

namespace Spindle.Workloads.Beyond;

/// <summary>
/// Bursts of O_DIRECT 4 KiB reads at random offsets, each burst's reads all started at once and then awaited:
/// Spindle's <c>ReadAsync</c> against System.IO's, one call per read on both sides. The row shows how many
/// <c>io_uring_enter</c> calls Spindle makes for reads that arrive together (the report's enters per read), against
/// fio reading at the same depth with the whole burst submitted and completed at once.
/// </summary>
public sealed class ReadsAtOnce : Workload
{
    private const int BlockSize = 4096;

    private readonly long _fileSize;
    private readonly int _burst;
    private readonly int _bursts;
    private readonly long[] _offsets;
    private readonly ValueTask<int>[] _pending;
    private AlignedBuffer? _buffers;
    private SafeFileHandle? _handle;
    private string _path = "";
    private int _start;

    /// <summary>Creates the row: <paramref name="bursts"/> bursts of <paramref name="burst"/> reads per invocation.</summary>
    public ReadsAtOnce(long fileSize, int burst, int bursts)
        : base("Beyond", $"ReadsAtOnce4K.Direct({burst} started at once, {Units.Bytes(fileSize)})")
    {
        _fileSize = fileSize;
        _burst = burst;
        _bursts = bursts;
        _pending = new ValueTask<int>[burst];
        _offsets = RandomOffsets.Table(fileSize, BlockSize);
    }

    /// <summary>Reads started at once.</summary>
    public int Burst => _burst;

    /// <inheritdoc />
    public override IReadOnlyList<Contender> Contenders => Workloads.Contenders.Synchronous;

    /// <inheritdoc />
    public override bool IsAsync => true;

    /// <inheritdoc />
    public override int OperationsPerInvocation => _burst * _bursts;

    /// <inheritdoc />
    public override long CallsPerInvocation => OperationsPerInvocation;

    /// <inheritdoc />
    public override FioJob? Fio => new("randread", BlockSize, "io_uring", _burst, Direct: true, _path, _fileSize)
    {
        ExtraArguments = [$"--iodepth_batch_submit={_burst}", $"--iodepth_batch_complete_min={_burst}"],
    };

    /// <inheritdoc />
    public override void Setup(BenchFiles files)
    {
        _path = files.Source(_fileSize);
        _buffers = new AlignedBuffer(BlockSize * _burst, DirectIo.Alignment);
        _handle = DirectIo.OpenHandle(_path);
    }

    /// <inheritdoc />
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    public override async ValueTask RunAsync(Contender contender)
    {
        SafeFileHandle handle = _handle!;
        Memory<byte> memory = _buffers!.Memory;
        for (int b = 0; b < _bursts; b++)
        {
            int start = _start;
            _start = (start + _burst) % RandomOffsets.Count;
            for (int i = 0; i < _burst; i++)
            {
                Memory<byte> buffer = memory.Slice(i * BlockSize, BlockSize);
                long offset = _offsets[(start + i) % RandomOffsets.Count];
                _pending[i] = contender == Contender.SystemIO
                    ? System.IO.RandomAccess.ReadAsync(handle, buffer, offset)
                    : SpindleRandomAccess.ReadAsync(handle, buffer, offset, contender.Engine());
            }
            for (int i = 0; i < _burst; i++)
            {
                await _pending[i].ConfigureAwait(false);
            }
        }
    }

    /// <inheritdoc />
    protected override void Dispose(bool disposing)
    {
        _handle?.Dispose();
        if (_buffers is not null)
        {
            ((IDisposable)_buffers).Dispose();
        }
    }
}
