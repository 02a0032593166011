using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Engines.FastPath;
using Spindle.Engines.ThreadPool;

namespace Spindle.Engines;

/// <summary>
/// One way of running asynchronous file operations. Arguments arrive validated; a negative <c>fileOffset</c> means the
/// handle has no position. Writes complete only when every byte is written. Engines keep the handle referenced and the
/// buffer pinned until the kernel is done with them. Every request becomes one <see cref="FileRequest"/> and goes
/// through <see cref="Run"/>, with the handle's <see cref="HandleFacts"/> its caller looked up where the handle entered.
/// </summary>
internal abstract partial class FileIoEngine
{
    /// <summary>Which engine this is.</summary>
    public abstract IoEngine Kind { get; }

    /// <summary>Runs <paramref name="request"/>: a read first tries the page cache, then the request runs where the <see cref="Router"/> sends it.</summary>
    internal RequestTask Run(FileRequest request)
    {
        if (request.UseFastPath && Kind != IoEngine.Sync && ReadFastPath.TryServe(ref request, Kind, out long cached))
        {
            return RequestTask.Completed(cached);
        }
        Mechanism mechanism = Router.Route(request, Kind);
        return mechanism switch
        {
            Mechanism.Done => RequestTask.Completed(0),
            Mechanism.Inline => InlineExecutor.Run(request, Kind, IoMechanism.Inline),
            Mechanism.FastPath => InlineExecutor.Run(request, Kind, IoMechanism.FastPath),
            Mechanism.Pool or Mechanism.Blocking => ThreadPoolEngine.Instance.RunOnWorker(request, mechanism, Kind),
            _ => RunOnRing(request),
        };
    }

    /// <summary>The ring's executor, whatever the router would choose; only the io_uring engine's router sends requests there.</summary>
    internal virtual RequestTask RunOnRing(in FileRequest request)
        => throw new InvalidOperationException($"The {Kind} engine has no ring to run a {request.Kind} on.");

    /// <summary>A read; with <paramref name="useFastPath"/> cached pages may be read on the caller's thread first (the result is the same).</summary>
    public ValueTask<int> ReadAsync(SafeFileHandle handle, HandleFacts facts, Memory<byte> buffer, long fileOffset, bool useFastPath, CancellationToken cancellationToken)
        => Run(FileRequest.Read(handle, facts, buffer, fileOffset, useFastPath, cancellationToken)).AsRead();

    /// <summary>A write of every byte; with <paramref name="useFastPath"/> a small buffer may be copied into the page cache on the caller's thread.</summary>
    public ValueTask WriteAsync(SafeFileHandle handle, HandleFacts facts, ReadOnlyMemory<byte> buffer, long fileOffset, bool useFastPath, CancellationToken cancellationToken)
        => Run(FileRequest.Write(handle, facts, buffer, fileOffset, useFastPath, cancellationToken)).AsWrite();

    /// <summary>A scatter read; <paramref name="useFastPath"/> as for <see cref="ReadAsync(SafeFileHandle, HandleFacts, Memory{byte}, long, bool, CancellationToken)"/>.</summary>
    public ValueTask<long> ReadScatterAsync(SafeFileHandle handle, HandleFacts facts, IReadOnlyList<Memory<byte>> buffers, long fileOffset, bool useFastPath, CancellationToken cancellationToken)
        => Run(FileRequest.ReadScatter(handle, facts, buffers, fileOffset, useFastPath, cancellationToken)).AsScatterRead();

    /// <summary>A gather write of every byte; <paramref name="useFastPath"/> as for <see cref="WriteAsync(SafeFileHandle, HandleFacts, ReadOnlyMemory{byte}, long, bool, CancellationToken)"/>.</summary>
    public ValueTask WriteGatherAsync(SafeFileHandle handle, HandleFacts facts, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset, bool useFastPath, CancellationToken cancellationToken)
        => Run(FileRequest.WriteGather(handle, facts, buffers, fileOffset, useFastPath, cancellationToken)).AsWrite();

    /// <summary><c>fsync</c>: data and metadata to the device.</summary>
    public ValueTask FlushToDiskAsync(SafeFileHandle handle, HandleFacts facts, CancellationToken cancellationToken)
        => Run(FileRequest.Sync(handle, facts, dataOnly: false, cancellationToken)).AsWrite();

    /// <summary><c>fdatasync</c>: the data, and the metadata needed to read it back, to the device.</summary>
    public ValueTask FlushDataToDiskAsync(SafeFileHandle handle, HandleFacts facts, CancellationToken cancellationToken)
        => Run(FileRequest.Sync(handle, facts, dataOnly: true, cancellationToken)).AsWrite();

    /// <summary>A write of every byte that completes only when they are on the device (<c>RWF_DSYNC</c>, or a write and an <c>fdatasync</c>).</summary>
    public ValueTask WriteDurableAsync(SafeFileHandle handle, HandleFacts facts, ReadOnlyMemory<byte> buffer, long fileOffset, CancellationToken cancellationToken)
        => Run(FileRequest.WriteDurable(handle, facts, buffer, fileOffset, cancellationToken)).AsWrite();
}
