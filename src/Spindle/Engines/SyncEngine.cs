using Microsoft.Win32.SafeHandles;
using Spindle.RandomAccess;

namespace Spindle.Engines;

/// <summary>The blocking system call on the caller's thread; every operation completes synchronously.</summary>
internal sealed class SyncEngine : FileIoEngine
{
    internal static readonly SyncEngine Instance = new();

    public override IoEngine Kind => IoEngine.Sync;

    public override ValueTask<int> ReadAsync(SafeFileHandle handle, Memory<byte> buffer, long fileOffset, bool useFastPath, CancellationToken cancellationToken)
    {
        try
        {
            return new ValueTask<int>(HandleIo.Read(handle, buffer.Span, fileOffset));
        }
        catch (Exception e)
        {
            return ValueTask.FromException<int>(e);
        }
    }

    public override ValueTask WriteAsync(SafeFileHandle handle, ReadOnlyMemory<byte> buffer, long fileOffset, CancellationToken cancellationToken)
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

    public override ValueTask<long> ReadScatterAsync(SafeFileHandle handle, IReadOnlyList<Memory<byte>> buffers, long fileOffset, CancellationToken cancellationToken)
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

    public override ValueTask WriteGatherAsync(SafeFileHandle handle, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset, CancellationToken cancellationToken)
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
}
