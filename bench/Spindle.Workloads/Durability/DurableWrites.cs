using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;

namespace Spindle.Workloads.Durability;

/// <summary>How a <see cref="DurableWrites"/> row makes each 4 KiB write durable on the Spindle side.</summary>
public enum DurabilityCall
{
    /// <summary>The write, then <c>fsync</c> (<see cref="SpindleRandomAccess.FlushToDisk"/>).</summary>
    Fsync,

    /// <summary>The write, then <c>fdatasync</c> (<see cref="SpindleRandomAccess.FlushDataToDisk"/>).</summary>
    Fdatasync,

    /// <summary>One durable write (<see cref="SpindleRandomAccess.WriteDurable"/>: <c>pwritev2</c> with <c>RWF_DSYNC</c>).</summary>
    RwfDsync,
}

/// <summary>
/// 4 KiB writes over existing data, each made durable before the next: System.IO's only way (write, then
/// <c>FlushToDisk</c>, i.e. <c>fsync</c>) against Spindle's <paramref name="call"/>, and fio with the matching sync option.
/// With <paramref name="asynchronous"/> both sides await (System.IO: <c>WriteAsync</c>, then its only flush, which is
/// synchronous) and the Spindle columns are every engine: <c>FlushDataToDiskAsync</c> and <c>WriteDurableAsync</c> run
/// on the ring on the io_uring engine, on a pool thread on the ThreadPool engine.
/// </summary>
public sealed class DurableWrites(DurabilityCall call, int writes, bool asynchronous = false)
    : Workload("Beyond", $"Durable.Write4K.{call}{(asynchronous ? "Async" : "")}")
{
    private const int BlockSize = 4096;
    private const long FileSize = 4 * Units.MiB;

    private readonly byte[] _block = new byte[BlockSize];
    private SafeFileHandle? _handle;
    private string _path = "";
    private long _next;

    /// <inheritdoc />
    public override IReadOnlyList<Contender> Contenders => asynchronous ? Workloads.Contenders.AllEngines : Workloads.Contenders.Synchronous;

    /// <inheritdoc />
    public override bool IsAsync => asynchronous;

    /// <inheritdoc />
    public override int OperationsPerInvocation => writes;

    /// <inheritdoc />
    public override FioJob? Fio => call switch
    {
        DurabilityCall.Fsync => new FioJob("randwrite", BlockSize, "psync", 1, Direct: false, _path, FileSize) { ExtraArguments = ["--fsync=1"] },
        DurabilityCall.Fdatasync => new FioJob("randwrite", BlockSize, "psync", 1, Direct: false, _path, FileSize) { ExtraArguments = ["--fdatasync=1"] },
        // fio's psync engines have no RWF_DSYNC; O_DSYNC (--sync=dsync) makes the kernel do the same per write.
        _ => new FioJob("randwrite", BlockSize, "psync", 1, Direct: false, _path, FileSize) { ExtraArguments = ["--sync=dsync"] },
    };

    /// <inheritdoc />
    public override void Setup(BenchFiles files)
    {
        // An existing, fully written file: the writes overwrite blocks, so only data changes (and timestamps).
        _path = files.Source(FileSize);
        _handle = File.OpenHandle(_path, FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite);
        new Random(7).NextBytes(_block);
    }

    /// <inheritdoc />
    public override ValueTask RunAsync(Contender contender) => asynchronous ? RunAwaitingAsync(contender) : RunBlocking(contender);

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask RunAwaitingAsync(Contender contender)
    {
        SafeFileHandle handle = _handle!;
        for (int i = 0; i < writes; i++)
        {
            long offset = _next;
            _next = (_next + 97 * BlockSize) % FileSize;
            if (contender == Contender.SystemIO)
            {
                await System.IO.RandomAccess.WriteAsync(handle, _block, offset).ConfigureAwait(false);
                System.IO.RandomAccess.FlushToDisk(handle);
                continue;
            }
            IoEngine engine = contender.Engine();
            switch (call)
            {
                case DurabilityCall.Fsync:
                    await SpindleRandomAccess.WriteAsync(handle, _block, offset, engine).ConfigureAwait(false);
                    await SpindleRandomAccess.FlushToDiskAsync(handle, engine).ConfigureAwait(false);
                    break;
                case DurabilityCall.Fdatasync:
                    await SpindleRandomAccess.WriteAsync(handle, _block, offset, engine).ConfigureAwait(false);
                    await SpindleRandomAccess.FlushDataToDiskAsync(handle, engine).ConfigureAwait(false);
                    break;
                default:
                    await SpindleRandomAccess.WriteDurableAsync(handle, _block, offset, engine).ConfigureAwait(false);
                    break;
            }
        }
    }

    private ValueTask RunBlocking(Contender contender)
    {
        SafeFileHandle handle = _handle!;
        for (int i = 0; i < writes; i++)
        {
            long offset = _next;
            _next = (_next + 97 * BlockSize) % FileSize;
            if (contender == Contender.SystemIO)
            {
                System.IO.RandomAccess.Write(handle, _block, offset);
                System.IO.RandomAccess.FlushToDisk(handle);
                continue;
            }
            switch (call)
            {
                case DurabilityCall.Fsync:
                    SpindleRandomAccess.Write(handle, _block, offset);
                    SpindleRandomAccess.FlushToDisk(handle);
                    break;
                case DurabilityCall.Fdatasync:
                    SpindleRandomAccess.Write(handle, _block, offset);
                    SpindleRandomAccess.FlushDataToDisk(handle);
                    break;
                default:
                    SpindleRandomAccess.WriteDurable(handle, _block, offset);
                    break;
            }
        }
        return default;
    }

    /// <inheritdoc />
    protected override void Dispose(bool disposing) => _handle?.Dispose();
}
