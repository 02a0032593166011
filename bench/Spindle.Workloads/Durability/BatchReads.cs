using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Workloads.Beyond;

namespace Spindle.Workloads.Durability;

/// <summary>
/// Batches of reads of one block size (4 KiB unless told) at random aligned offsets: Spindle's
/// <see cref="SpindleRandomAccess.ReadBatchAsync(ReadOnlyMemory{BatchReadRequest}, Memory{BatchReadResult}, IoEngine, CancellationToken)"/>
/// against the same reads as System.IO <c>ReadAsync</c> calls all started and then awaited (Task.WhenAll without
/// its allocation), O_DIRECT (against fio io_uring with batched submission and completion) or page-cache hits.
/// </summary>
/// <remarks>
/// With <c>oneByOne</c> both sides read the same offsets one awaited call after the other: Spindle's
/// <see cref="SpindleRandomAccess.ReadAsync(SafeFileHandle, Memory{byte}, long, IoEngine, CancellationToken)"/> (the fast
/// path on the caller's thread) against System.IO's <c>RandomAccess.ReadAsync</c> (a pool hop each). The row exists to show
/// that a batch of cached reads is no slower than the same reads one by one through the fast path: that is the Spindle
/// column of the batch row (<c>Cached</c>, same ns per read) against this row's Spindle column. Its System.IO column is
/// the same shape as its Spindle column, so that its ratio compares like with like; until 26 Nov it was the batch row's
/// parallel WhenAll, which made the ratio a comparison of one core's sequential copies with two cores' parallel ones.
/// <para>
/// With <c>blocking</c> the caller is a thread that waits for the whole batch (a storage engine's own thread):
/// Spindle's synchronous <see cref="SpindleRandomAccess.ReadBatch(ReadOnlySpan{BatchReadRequest}, Span{BatchReadResult})"/>
/// against System.IO's best shape for such a thread, the same <c>ReadAsync</c> calls all started and then waited for.
/// </para>
/// </remarks>
public sealed class BatchReads : Workload
{
    private const int OffsetCount = RandomOffsets.Count;

    private readonly int _blockSize;

    private readonly long _fileSize;
    private readonly int _batch;
    private readonly bool _direct;
    private readonly bool _oneByOne;
    private readonly bool _blocking;
    private readonly int _batches;
    private readonly long[] _offsets;
    private readonly ValueTask<int>[] _pending;
    private readonly BatchReadRequest[] _requests;
    private readonly BatchReadResult[] _results;
    private AlignedBuffer? _buffers;
    private SafeFileHandle? _handle;
    private string _path = "";
    private int _start;

    /// <summary>Creates the row: <paramref name="batches"/> batches of <paramref name="batch"/> reads of <paramref name="blockSize"/> bytes per invocation.</summary>
    public BatchReads(long fileSize, int batch, bool direct, int batches, bool oneByOne = false, int blockSize = 4096, bool blocking = false)
        : base("Beyond", $"BatchRead{blockSize / 1024}K.{(direct ? "Direct" : "Cached")}{(oneByOne ? ".OneByOne" : "")}{(blocking ? ".Blocking" : "")}({batch} per batch, {Units.Bytes(fileSize)})")
    {
        _blocking = blocking;
        _blockSize = blockSize;
        _fileSize = fileSize;
        _batch = batch;
        _direct = direct;
        _oneByOne = oneByOne;
        _batches = batches;
        _pending = new ValueTask<int>[batch];
        _requests = new BatchReadRequest[batch];
        _results = new BatchReadResult[batch];
        _offsets = RandomOffsets.Table(fileSize, blockSize);
    }

    /// <inheritdoc />
    public override IReadOnlyList<Contender> Contenders => _blocking ? Workloads.Contenders.Synchronous : Workloads.Contenders.AllEngines;

    /// <inheritdoc />
    public override bool IsAsync => true;

    /// <inheritdoc />
    public override int OperationsPerInvocation => _batch * _batches;

    /// <inheritdoc />
    public override FioJob? Fio => _direct
        ? new FioJob("randread", _blockSize, "io_uring", _batch, Direct: true, _path, _fileSize)
        {
            ExtraArguments = [$"--iodepth_batch_submit={_batch}", $"--iodepth_batch_complete_min={_batch}"],
        }
        : new FioJob("randread", _blockSize, "psync", 1, Direct: false, _path, _fileSize);

    /// <inheritdoc />
    public override void Setup(BenchFiles files)
    {
        _path = files.Source(_fileSize);
        _buffers = new AlignedBuffer(_blockSize * _batch, DirectIo.Alignment);
        if (_direct)
        {
            _handle = DirectIo.OpenHandle(_path);
        }
        else
        {
            _handle = File.OpenHandle(_path, FileMode.Open, FileAccess.Read, FileShare.Read, FileOptions.Asynchronous);
            PageCache.Warm(_handle, _fileSize);
        }
    }

    /// <inheritdoc />
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    public override async ValueTask RunAsync(Contender contender)
    {
        SafeFileHandle handle = _handle!;
        Memory<byte> memory = _buffers!.Memory;
        for (int b = 0; b < _batches; b++)
        {
            int start = _start;
            _start = (start + _batch) % OffsetCount;
            if (contender == Contender.SystemIO && _oneByOne)
            {
                for (int i = 0; i < _batch; i++)
                {
                    await System.IO.RandomAccess.ReadAsync(handle, memory.Slice(i * _blockSize, _blockSize), _offsets[(start + i) % OffsetCount]).ConfigureAwait(false);
                }
                continue;
            }
            if (contender == Contender.SystemIO)
            {
                for (int i = 0; i < _batch; i++)
                {
                    _pending[i] = System.IO.RandomAccess.ReadAsync(handle, memory.Slice(i * _blockSize, _blockSize), _offsets[(start + i) % OffsetCount]);
                }
                for (int i = 0; i < _batch; i++)
                {
                    if (_blocking)
                    {
                        _pending[i].AsTask().GetAwaiter().GetResult();
                    }
                    else
                    {
                        await _pending[i].ConfigureAwait(false);
                    }
                }
                continue;
            }
            if (_oneByOne)
            {
                for (int i = 0; i < _batch; i++)
                {
                    await SpindleRandomAccess.ReadAsync(handle, memory.Slice(i * _blockSize, _blockSize), _offsets[(start + i) % OffsetCount], contender.Engine()).ConfigureAwait(false);
                }
                continue;
            }
            for (int i = 0; i < _batch; i++)
            {
                _requests[i] = new BatchReadRequest(handle, memory.Slice(i * _blockSize, _blockSize), _offsets[(start + i) % OffsetCount]);
            }
            if (_blocking)
            {
                SpindleRandomAccess.ReadBatch(_requests, _results);
            }
            else
            {
                await SpindleRandomAccess.ReadBatchAsync(_requests, _results, contender.Engine()).ConfigureAwait(false);
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
