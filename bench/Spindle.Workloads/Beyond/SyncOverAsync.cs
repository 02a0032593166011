using System.Diagnostics;
using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;

namespace Spindle.Workloads.Beyond;

/// <summary>
/// Callers on thread-pool threads that each wait for their O_DIRECT 4 KiB reads synchronously, one after the other
/// (sync-over-async, as a storage engine that waits for a read on the session's own pool thread does): System.IO
/// against Spindle, each operation's latency recorded so that the report can give the worst single wait.
/// </summary>
/// <remarks>
/// Spindle's side waits with <c>GetAwaiter().GetResult()</c> on the <see cref="ValueTask{TResult}"/> itself, which
/// Spindle allows before completion; System.IO's <see cref="ValueTask{TResult}"/> throws there, so its side waits
/// through <see cref="ValueTask{TResult}.AsTask"/>. The pool is sized for the callers while the row runs (as an
/// operator sizes it for a server that waits this way), so that neither side waits for the pool to add threads.
/// </remarks>
public sealed class SyncOverAsync : Workload
{
    private const int BlockSize = 4096;

    private readonly long _fileSize;
    private readonly int _threads;
    private readonly int _reads;
    private readonly long[] _offsets;
    private readonly ValueTask[] _callers;   // the callers of the running invocation
    private AlignedBuffer[] _buffers = [];
    private SafeFileHandle? _handle;
    private string _path = "";
    private int _start;
    private (int Workers, int Io) _minThreads;

    /// <summary>Creates the row: <paramref name="reads"/> reads per invocation shared by <paramref name="threads"/> waiting callers.</summary>
    public SyncOverAsync(long fileSize, int threads, int reads)
        : base("Beyond", $"SyncOverAsync4K.Direct({threads} pool threads, {Units.Bytes(fileSize)})")
    {
        _fileSize = fileSize;
        _threads = threads;
        _reads = Math.Max(reads, threads);
        _callers = new ValueTask[threads];
        _offsets = RandomOffsets.Table(fileSize, BlockSize);
    }

    /// <inheritdoc />
    public override IReadOnlyList<Contender> Contenders => Workloads.Contenders.Synchronous;

    /// <inheritdoc />
    public override bool IsAsync => true;

    /// <inheritdoc />
    public override bool RecordsLatency => true;

    /// <inheritdoc />
    public override int OperationsPerInvocation => _reads;

    /// <inheritdoc />
    public override long CallsPerInvocation => _reads;

    /// <summary>
    /// The same shape in C: fio's <c>psync</c> engine with one thread per caller, each reading and waiting in turn. Its
    /// worst completion latency is what this machine gives a thread that waits for its read, whatever the library.
    /// </summary>
    public override FioJob? Fio => FioJob.ThreadPerCaller("randread", BlockSize, _threads, direct: true, _path, _fileSize);

    /// <inheritdoc />
    public override void Setup(BenchFiles files)
    {
        _path = files.Source(_fileSize);
        _buffers = new AlignedBuffer[_threads];
        for (int i = 0; i < _threads; i++)
        {
            _buffers[i] = new AlignedBuffer(BlockSize, DirectIo.Alignment);
        }
        _handle = DirectIo.OpenHandle(_path);
        ThreadPool.GetMinThreads(out int workers, out int io);
        _minThreads = (workers, io);
        ThreadPool.SetMinThreads(Math.Max(workers, _threads + Environment.ProcessorCount), io);
    }

    /// <inheritdoc />
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    public override async ValueTask RunAsync(Contender contender)
    {
        int start = _start;
        _start = (start + _reads) % RandomOffsets.Count;
        for (int i = 0; i < _threads; i++)
        {
            _callers[i] = Caller(contender, i, start);
        }
        for (int i = 0; i < _callers.Length; i++)
        {
            await _callers[i].ConfigureAwait(false);
        }
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask Caller(Contender contender, int caller, int start)
    {
        await Task.Yield();   // from here on a pool thread of its own, which it keeps until its reads are done
        Memory<byte> buffer = _buffers[caller].Memory;
        SafeFileHandle handle = _handle!;
        LatencyRecorder? latencies = Latencies;
        for (int i = caller; i < _reads; i += _threads)
        {
            long offset = _offsets[(start + i) % RandomOffsets.Count];
            long started = latencies is null ? 0 : Stopwatch.GetTimestamp();
            _ = contender == Contender.SystemIO
                ? System.IO.RandomAccess.ReadAsync(handle, buffer, offset).AsTask().GetAwaiter().GetResult()
                : SpindleRandomAccess.ReadAsync(handle, buffer, offset, contender.Engine()).GetAwaiter().GetResult();
            latencies?.Record(started);
        }
    }

    /// <inheritdoc />
    protected override void Dispose(bool disposing)
    {
        _handle?.Dispose();
        if (_minThreads.Workers > 0)
        {
            ThreadPool.SetMinThreads(_minThreads.Workers, _minThreads.Io);
        }
        foreach (AlignedBuffer buffer in _buffers)
        {
            ((IDisposable)buffer).Dispose();
        }
    }
}
