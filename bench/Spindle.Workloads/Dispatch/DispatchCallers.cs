using System.Diagnostics;
using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;

namespace Spindle.Workloads.Dispatch;

/// <summary>
/// One cell of the dispatch matrix as an application runs it: <c>N</c> callers on one handle, each
/// looping <c>{ await a 4 KiB read at a random aligned offset; spin C µs of CPU }</c> until a deadline.
/// The read's latency is taken from the call to the resumed continuation (so a continuation that waits
/// behind another's work shows it), and the longest single wait is kept.
/// </summary>
/// <remarks>
/// The handle belongs to the caller; the buffers (aligned for O_DIRECT) and the offset table to this
/// object. One round at a time: <see cref="RunAsync"/> must not be called again before it completes.
/// </remarks>
public sealed class DispatchCallers : IDisposable
{
    /// <summary>Bytes per read.</summary>
    public const int BlockSize = 4096;

    private const int OffsetCount = 1 << 16;   // a power of two: callers walk the table with a mask

    private readonly SafeFileHandle _handle;
    private readonly int _inFlight;
    private readonly long _spinIterations;     // CpuSpin iterations after each read
    private readonly long[] _offsets = new long[OffsetCount];
    private readonly AlignedBuffer[] _buffers;
    private readonly long[] _operations;       // per caller, for the running round
    private readonly long[] _worstTicks;       // per caller, for the running round
    private readonly ValueTask[] _callers;
    private int _start;                        // where the next round's callers start in the offset table

    /// <summary>Callers on <paramref name="handle"/> over its first <paramref name="size"/> bytes.</summary>
    public DispatchCallers(SafeFileHandle handle, long size, int inFlight, long spinIterations)
    {
        ArgumentNullException.ThrowIfNull(handle);
        ArgumentOutOfRangeException.ThrowIfLessThan(size, BlockSize);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(inFlight);
        ArgumentOutOfRangeException.ThrowIfNegative(spinIterations);
        _handle = handle;
        _inFlight = inFlight;
        _spinIterations = spinIterations;
        var random = new Random(42);
        long blocks = size / BlockSize;
        for (int i = 0; i < _offsets.Length; i++)
        {
            _offsets[i] = random.NextInt64(blocks) * BlockSize;
        }
        _buffers = new AlignedBuffer[inFlight];
        for (int i = 0; i < inFlight; i++)
        {
            _buffers[i] = new AlignedBuffer(BlockSize, DirectIo.Alignment);
        }
        _operations = new long[inFlight];
        _worstTicks = new long[inFlight];
        _callers = new ValueTask[inFlight];
    }

    /// <summary>
    /// Runs every caller as <paramref name="contender"/> until <paramref name="duration"/> has passed
    /// (each finishes the read and spin it is in, and makes at least one read), recording each read's latency into
    /// <paramref name="samples"/> when given.
    /// </summary>
    public async Task<DispatchRound> RunAsync(Contender contender, TimeSpan duration, DispatchSamples? samples)
    {
        int start = _start;
        _start = (start + 7919) & (OffsetCount - 1);
        long began = Stopwatch.GetTimestamp();
        long deadline = began + (long)(duration.TotalSeconds * Stopwatch.Frequency);
        for (int i = 0; i < _inFlight; i++)
        {
            _callers[i] = Caller(contender, i, start + i * (OffsetCount / _inFlight), deadline, samples);
        }
        for (int i = 0; i < _inFlight; i++)
        {
            await _callers[i].ConfigureAwait(false);
        }
        double elapsedNs = Stopwatch.GetElapsedTime(began).TotalNanoseconds;
        return new DispatchRound(_operations.Sum(), elapsedNs, _worstTicks.Max() * 1e9 / Stopwatch.Frequency);
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask Caller(Contender contender, int index, int cursor, long deadline, DispatchSamples? samples)
    {
        // Each caller starts on a pool thread, as a server's concurrent requests do (see RandomReads).
        await Task.Yield();
        Memory<byte> buffer = _buffers[index].Memory;
        SafeFileHandle handle = _handle;
        bool systemIO = contender == Contender.SystemIO;
        bool auto = contender == Contender.SpindleAuto;
        IoEngine engine = systemIO || auto ? IoEngine.Auto : contender.Engine();
        long operations = 0, worst = 0;
        // At least one read each: on a loaded machine a caller's first turn on a pool thread may come after the
        // deadline, and a round of no reads would have no figures at all.
        do
        {
            long offset = _offsets[cursor++ & (OffsetCount - 1)];
            long started = Stopwatch.GetTimestamp();
            _ = systemIO ? await System.IO.RandomAccess.ReadAsync(handle, buffer, offset).ConfigureAwait(false)
                : auto ? await SpindleRandomAccess.ReadAsync(handle, buffer, offset).ConfigureAwait(false)
                : await SpindleRandomAccess.ReadAsync(handle, buffer, offset, engine).ConfigureAwait(false);
            long waited = Stopwatch.GetTimestamp() - started;
            worst = Math.Max(worst, waited);
            samples?.Add(waited);
            operations++;
            CpuSpin.Run(_spinIterations);
        }
        while (Stopwatch.GetTimestamp() < deadline);
        _operations[index] = operations;
        _worstTicks[index] = worst;
    }

    /// <summary>Frees the buffers.</summary>
    public void Dispose()
    {
        foreach (AlignedBuffer buffer in _buffers)
        {
            ((IDisposable)buffer).Dispose();
        }
    }
}

/// <summary>What one round of <see cref="DispatchCallers"/> did.</summary>
/// <param name="Operations">Reads completed by all callers.</param>
/// <param name="ElapsedNs">From the start until the last caller finished.</param>
/// <param name="WorstWaitNs">The longest single read, call to resumed continuation.</param>
public readonly record struct DispatchRound(long Operations, double ElapsedNs, double WorstWaitNs)
{
    /// <summary>Reads per second.</summary>
    public double OperationsPerSecond => ElapsedNs > 0 ? Operations * 1e9 / ElapsedNs : double.NaN;
}

/// <summary>
/// Read latencies of one round in <see cref="Stopwatch"/> ticks, in an array allocated once: adding
/// allocates nothing, callers on several threads share it, samples beyond the capacity are dropped.
/// </summary>
public sealed class DispatchSamples(int capacity)
{
    private readonly long[] _ticks = new long[capacity];
    private int _count;   // samples added, kept or not

    /// <summary>The kept samples, unordered.</summary>
    public Span<long> Samples => _ticks.AsSpan(0, Math.Min(Volatile.Read(ref _count), _ticks.Length));

    /// <summary>Adds one latency.</summary>
    public void Add(long ticks)
    {
        int index = Interlocked.Increment(ref _count) - 1;
        if ((uint)index < (uint)_ticks.Length)
        {
            _ticks[index] = ticks;
        }
    }

    /// <summary>Forgets every sample.</summary>
    public void Clear() => Volatile.Write(ref _count, 0);
}
