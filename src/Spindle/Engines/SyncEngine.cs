using Microsoft.Win32.SafeHandles;
using Spindle.Engines.FastPath;
using Spindle.Engines.ThreadPool;
using Spindle.Syscalls;

namespace Spindle.Engines;

/// <summary>
/// The blocking system call on the caller's thread; every operation on a regular file or block device
/// completes synchronously. The router sends transfers on pipes, sockets and character devices to
/// threads of their own (<see cref="Mechanism.Blocking"/>): a read there may wait for a write the same
/// caller makes next, and blocking the caller would deadlock where System.IO works. The static methods
/// are the inline executor every engine uses.
/// </summary>
internal sealed class SyncEngine : FileIoEngine
{
    internal static readonly SyncEngine Instance = new();

    public override IoEngine Kind => IoEngine.Sync;

    public override ValueTask<int> ReadAsync(SafeFileHandle handle, HandleFacts facts, Memory<byte> buffer, long fileOffset, bool useFastPath, CancellationToken cancellationToken)
    {
        return Route(RequestKind.Read, facts, buffer.Length) == Mechanism.Blocking
            ? ThreadPoolEngine.Instance.Read(handle, facts, Mechanism.Blocking, buffer, fileOffset, prefix: 0, cancellationToken, Kind)
            : Read(handle, buffer, fileOffset, Kind);
    }

    /// <summary>The read on the caller's thread, whatever the handle.</summary>
    internal static ValueTask<int> Read(SafeFileHandle handle, Memory<byte> buffer, long fileOffset, IoEngine routedBy, int prefix = 0)
    {
        try
        {
            return new ValueTask<int>(prefix + HandleIo.Read(handle, buffer.Span, fileOffset, routedBy));
        }
        catch (Exception e)
        {
            return ValueTask.FromException<int>(e);
        }
    }

    public override ValueTask WriteAsync(SafeFileHandle handle, HandleFacts facts, ReadOnlyMemory<byte> buffer, long fileOffset, bool useFastPath, CancellationToken cancellationToken)
    {
        return Route(RequestKind.Write, facts, buffer.Length) == Mechanism.Blocking
            ? ThreadPoolEngine.Instance.Write(handle, facts, Mechanism.Blocking, buffer, fileOffset, cancellationToken, Kind)
            : Write(handle, buffer, fileOffset, Kind);
    }

    /// <summary>The write on the caller's thread, whatever the handle.</summary>
    internal static ValueTask Write(SafeFileHandle handle, ReadOnlyMemory<byte> buffer, long fileOffset, IoEngine routedBy)
    {
        try
        {
            HandleIo.Write(handle, buffer.Span, fileOffset, routedBy);
            return default;
        }
        catch (Exception e)
        {
            return ValueTask.FromException(e);
        }
    }

    public override ValueTask<long> ReadScatterAsync(SafeFileHandle handle, HandleFacts facts, IReadOnlyList<Memory<byte>> buffers, long fileOffset, bool useFastPath, CancellationToken cancellationToken)
    {
        return Route(RequestKind.ReadScatter, facts, Router.TotalLength(buffers)) == Mechanism.Blocking
            ? ThreadPoolEngine.Instance.ReadScatter(handle, facts, Mechanism.Blocking, buffers, fileOffset, cancellationToken, Kind)
            : ReadScatter(handle, buffers, fileOffset, Kind);
    }

    /// <summary>The scatter read on the caller's thread, whatever the handle.</summary>
    internal static ValueTask<long> ReadScatter(SafeFileHandle handle, IReadOnlyList<Memory<byte>> buffers, long fileOffset, IoEngine routedBy)
    {
        try
        {
            return new ValueTask<long>(HandleIo.ReadScatter(handle, buffers, fileOffset, routedBy));
        }
        catch (Exception e)
        {
            return ValueTask.FromException<long>(e);
        }
    }

    public override ValueTask WriteGatherAsync(SafeFileHandle handle, HandleFacts facts, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset, bool useFastPath, CancellationToken cancellationToken)
    {
        return Route(RequestKind.WriteGather, facts, Router.TotalLength(buffers)) == Mechanism.Blocking
            ? ThreadPoolEngine.Instance.WriteGather(handle, facts, Mechanism.Blocking, buffers, fileOffset, cancellationToken, Kind)
            : WriteGather(handle, buffers, fileOffset, Kind);
    }

    /// <summary>The gather write on the caller's thread, whatever the handle.</summary>
    internal static ValueTask WriteGather(SafeFileHandle handle, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset, IoEngine routedBy)
    {
        try
        {
            HandleIo.WriteGather(handle, buffers, fileOffset, routedBy);
            return default;
        }
        catch (Exception e)
        {
            return ValueTask.FromException(e);
        }
    }

    public override ValueTask FlushToDiskAsync(SafeFileHandle handle, HandleFacts facts, CancellationToken cancellationToken)
        => FlushToDisk(handle);

    /// <summary><c>fsync</c> on the caller's thread, its error in the task.</summary>
    internal static ValueTask FlushToDisk(SafeFileHandle handle)
    {
        try
        {
            HandleIo.FlushToDisk(handle);
            return default;
        }
        catch (Exception e)
        {
            return ValueTask.FromException(e);
        }
    }

    /// <summary><c>fdatasync</c> on the caller's thread, its error in the task.</summary>
    internal static ValueTask FlushData(SafeFileHandle handle)
    {
        try
        {
            DurableIo.FlushData(handle);
            return default;
        }
        catch (Exception e)
        {
            return ValueTask.FromException(e);
        }
    }

    private static Mechanism Route(RequestKind kind, HandleFacts facts, long length)
        => Router.Route(kind, facts, length, fileOffset: -1, useFastPath: false, IoEngine.Sync);
}
