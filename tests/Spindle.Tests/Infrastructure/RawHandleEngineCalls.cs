using Microsoft.Win32.SafeHandles;
using Spindle.Engines;
using Spindle.Engines.FastPath;

namespace Spindle.Tests;

/// <summary>
/// The engine's calls for a raw handle that only tests make: the library's entries look the handle's facts up once
/// where the handle enters, and pass them on.
/// </summary>
internal static class RawHandleEngineCalls
{
    internal static ValueTask<int> ReadAsync(this FileIoEngine engine, SafeFileHandle handle, Memory<byte> buffer, long fileOffset, CancellationToken cancellationToken)
        => engine.ReadAsync(handle, HandleFacts.Of(handle), buffer, fileOffset, ReadFastPath.Enabled, cancellationToken);

    internal static ValueTask<int> ReadAsync(this FileIoEngine engine, SafeFileHandle handle, Memory<byte> buffer, long fileOffset, bool useFastPath, CancellationToken cancellationToken)
        => engine.ReadAsync(handle, HandleFacts.Of(handle), buffer, fileOffset, useFastPath, cancellationToken);

    internal static ValueTask WriteAsync(this FileIoEngine engine, SafeFileHandle handle, ReadOnlyMemory<byte> buffer, long fileOffset, bool useFastPath, CancellationToken cancellationToken)
        => engine.WriteAsync(handle, HandleFacts.Of(handle), buffer, fileOffset, useFastPath, cancellationToken);

    internal static ValueTask<long> ReadScatterAsync(this FileIoEngine engine, SafeFileHandle handle, IReadOnlyList<Memory<byte>> buffers, long fileOffset, bool useFastPath, CancellationToken cancellationToken)
        => engine.ReadScatterAsync(handle, HandleFacts.Of(handle), buffers, fileOffset, useFastPath, cancellationToken);

    internal static ValueTask WriteGatherAsync(this FileIoEngine engine, SafeFileHandle handle, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset, bool useFastPath, CancellationToken cancellationToken)
        => engine.WriteGatherAsync(handle, HandleFacts.Of(handle), buffers, fileOffset, useFastPath, cancellationToken);

    internal static ValueTask FlushDataToDiskAsync(this FileIoEngine engine, SafeFileHandle handle, CancellationToken cancellationToken)
        => engine.FlushDataToDiskAsync(handle, HandleFacts.Of(handle), cancellationToken);

    internal static ValueTask WriteDurableAsync(this FileIoEngine engine, SafeFileHandle handle, ReadOnlyMemory<byte> buffer, long fileOffset, CancellationToken cancellationToken)
        => engine.WriteDurableAsync(handle, HandleFacts.Of(handle), buffer, fileOffset, cancellationToken);
}
