using System.Diagnostics;
using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;

namespace Spindle.Workloads.Beyond;

/// <summary>
/// 4 KiB reads at random aligned offsets of a large file with a fixed number in flight, all contenders
/// on the same handle: page-cache hits (the file is read once first) or O_DIRECT misses. The queue-depth
/// sweep (<see cref="Sweep"/>) is the same row with System.IO and Spindle's default only.
/// </summary>
public sealed class RandomReads : Workload
{
    private const int BlockSize = 4096;
    private const int OffsetCount = RandomOffsets.Count;

    private readonly long _fileSize;
    private readonly int _inFlight;
    private readonly bool _direct;
    private readonly int _reads;
    private readonly long[] _offsets;
    private readonly ValueTask[] _workers;   // the workers of the running invocation
    private readonly IReadOnlyList<Contender> _contenders;
    private AlignedBuffer[] _buffers = [];
    private SafeFileHandle? _handle;
    private string _path = "";
    private int _start;   // where the next invocation starts in the offset table

    /// <summary>Creates the row: <paramref name="reads"/> reads per invocation over a file of <paramref name="fileSize"/> bytes.</summary>
    public RandomReads(long fileSize, int inFlight, bool direct, int reads)
        : this("Beyond", "", fileSize, inFlight, direct, reads, Workloads.Contenders.AllEngines)
    {
    }

    private RandomReads(string group, string prefix, long fileSize, int inFlight, bool direct, int reads, IReadOnlyList<Contender> contenders)
        : base(group, $"{prefix}RandomRead4K.{(direct ? "Direct" : "Cached")}(QD {inFlight}, {Units.Bytes(fileSize)})")
    {
        _contenders = contenders;
        _fileSize = fileSize;
        _inFlight = inFlight;
        _direct = direct;
        _reads = reads;
        _workers = new ValueTask[inFlight];
        _offsets = RandomOffsets.Table(fileSize, BlockSize);
    }

    /// <summary>
    /// A point of the queue-depth sweep: O_DIRECT random reads at <paramref name="inFlight"/>, System.IO
    /// against Spindle's default engine (and fio), in the group <c>Sweep</c>.
    /// </summary>
    public static RandomReads Sweep(long fileSize, int inFlight, int reads) =>
        new("Sweep", "Sweep.", fileSize, inFlight, direct: true, reads, [Contender.SystemIO, Contender.SpindleAuto]);

    /// <summary>Reads in flight.</summary>
    public int InFlight => _inFlight;

    /// <inheritdoc />
    public override IReadOnlyList<Contender> Contenders => _contenders;

    /// <inheritdoc />
    public override bool RecordsLatency => true;

    /// <inheritdoc />
    public override bool IsAsync => true;

    /// <inheritdoc />
    public override int OperationsPerInvocation => _reads;

    /// <inheritdoc />
    public override long CallsPerInvocation => _reads;

    /// <inheritdoc />
    public override FioJob? Fio => _direct
        ? new FioJob("randread", BlockSize, "io_uring", _inFlight, Direct: true, _path, _fileSize)
        : new FioJob("randread", BlockSize, "psync", 1, Direct: false, _path, _fileSize);

    /// <inheritdoc />
    public override void Setup(BenchFiles files)
    {
        _path = files.Source(_fileSize);
        _buffers = new AlignedBuffer[_inFlight];
        for (int i = 0; i < _inFlight; i++)
        {
            _buffers[i] = new AlignedBuffer(BlockSize, DirectIo.Alignment);
        }
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
        int start = _start;
        _start = (start + _reads) % OffsetCount;
        for (int i = 0; i < _inFlight; i++)
        {
            _workers[i] = Worker(contender, i, start);
        }
        // Awaited one by one: all are already running, and this allocates no Task.WhenAll.
        for (int i = 0; i < _workers.Length; i++)
        {
            await _workers[i].ConfigureAwait(false);
        }
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask Worker(Contender contender, int worker, int start)
    {
        // Every worker starts on a thread-pool thread, as concurrent requests in a server do. Otherwise
        // all would start on the invoking thread, and a contender whose reads complete synchronously
        // (cached pages) would run them one after another on one core while one that always hops to
        // the pool spreads over all cores. Applied to every contender alike; the yield queues the
        // worker itself and allocates nothing.
        await Task.Yield();
        Memory<byte> buffer = _buffers[worker].Memory;
        SafeFileHandle handle = _handle!;
        LatencyRecorder? latencies = Latencies;
        for (int i = worker; i < _reads; i += _inFlight)
        {
            long offset = _offsets[(start + i) % OffsetCount];
            long started = latencies is null ? 0 : Stopwatch.GetTimestamp();
            _ = contender == Contender.SystemIO
                ? await System.IO.RandomAccess.ReadAsync(handle, buffer, offset).ConfigureAwait(false)
                : await SpindleRandomAccess.ReadAsync(handle, buffer, offset, contender.Engine()).ConfigureAwait(false);
            latencies?.Record(started);
        }
    }

    /// <inheritdoc />
    protected override void Dispose(bool disposing)
    {
        _handle?.Dispose();
        foreach (AlignedBuffer buffer in _buffers)
        {
            ((IDisposable)buffer).Dispose();
        }
    }
}
