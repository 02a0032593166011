using Microsoft.Win32.SafeHandles;
using Spindle.Engines.FastPath;
using Spindle.Engines.ThreadPool;
using Spindle.RandomAccess;

namespace Spindle.Engines;

/// <summary>
/// The blocking system call on the caller's thread; every operation on a regular file or block device
/// completes synchronously. Pipes, sockets and character devices go to the thread-pool engine (which
/// gives them threads of their own): a read there may wait for a write the same caller makes next,
/// and blocking the caller would deadlock where System.IO works.
/// </summary>
internal sealed class SyncEngine : FileIoEngine
{
    internal static readonly SyncEngine Instance = new();

    public override IoEngine Kind => IoEngine.Sync;

    public override ValueTask<int> ReadAsync(SafeFileHandle handle, Memory<byte> buffer, long fileOffset, bool useFastPath, CancellationToken cancellationToken)
    {
        if (!buffer.IsEmpty && MayBlock(handle))
        {
            return ThreadPoolEngine.Instance.ReadAsync(handle, buffer, fileOffset, useFastPath: false, cancellationToken);
        }
        return Read(handle, buffer, fileOffset);
    }

    /// <summary>The read on the caller's thread, whatever the handle.</summary>
    internal static ValueTask<int> Read(SafeFileHandle handle, Memory<byte> buffer, long fileOffset, int prefix = 0)
    {
        try
        {
            return new ValueTask<int>(prefix + HandleIo.Read(handle, buffer.Span, fileOffset));
        }
        catch (Exception e)
        {
            return ValueTask.FromException<int>(e);
        }
    }

    public override ValueTask WriteAsync(SafeFileHandle handle, ReadOnlyMemory<byte> buffer, long fileOffset, bool useFastPath, CancellationToken cancellationToken)
    {
        if (!buffer.IsEmpty && MayBlock(handle))
        {
            return ThreadPoolEngine.Instance.WriteAsync(handle, buffer, fileOffset, useFastPath: false, cancellationToken);
        }
        return Write(handle, buffer, fileOffset);
    }

    /// <summary>The write on the caller's thread, whatever the handle.</summary>
    internal static ValueTask Write(SafeFileHandle handle, ReadOnlyMemory<byte> buffer, long fileOffset)
    {
        try
        {
            HandleIo.Write(handle, buffer.Span, fileOffset);
            return default;
        }
        catch (Exception e)
        {
            return ValueTask.FromException(e);
        }
    }

    public override ValueTask<long> ReadScatterAsync(SafeFileHandle handle, IReadOnlyList<Memory<byte>> buffers, long fileOffset, bool useFastPath, CancellationToken cancellationToken)
    {
        if (MayBlock(handle))
        {
            return ThreadPoolEngine.Instance.ReadScatterAsync(handle, buffers, fileOffset, useFastPath: false, cancellationToken);
        }
        return ReadScatter(handle, buffers, fileOffset);
    }

    /// <summary>The scatter read on the caller's thread, whatever the handle.</summary>
    internal static ValueTask<long> ReadScatter(SafeFileHandle handle, IReadOnlyList<Memory<byte>> buffers, long fileOffset)
    {
        try
        {
            return new ValueTask<long>(HandleIo.ReadScatter(handle, buffers, fileOffset));
        }
        catch (Exception e)
        {
            return ValueTask.FromException<long>(e);
        }
    }

    public override ValueTask WriteGatherAsync(SafeFileHandle handle, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset, bool useFastPath, CancellationToken cancellationToken)
    {
        if (MayBlock(handle))
        {
            return ThreadPoolEngine.Instance.WriteGatherAsync(handle, buffers, fileOffset, useFastPath: false, cancellationToken);
        }
        return WriteGather(handle, buffers, fileOffset);
    }

    /// <summary>The gather write on the caller's thread, whatever the handle.</summary>
    internal static ValueTask WriteGather(SafeFileHandle handle, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset)
    {
        try
        {
            HandleIo.WriteGather(handle, buffers, fileOffset);
            return default;
        }
        catch (Exception e)
        {
            return ValueTask.FromException(e);
        }
    }

    public override ValueTask FlushToDiskAsync(SafeFileHandle handle, CancellationToken cancellationToken)
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

    private static bool MayBlock(SafeFileHandle handle) => HandleFacts.MayBlock(handle);
}
