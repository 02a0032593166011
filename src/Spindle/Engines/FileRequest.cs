using Microsoft.Win32.SafeHandles;
using Spindle.Engines.FastPath;
using Spindle.Syscalls;

namespace Spindle.Engines;

/// <summary>One request from the public entry to the executor that runs it: built once, routed once (<see cref="Router"/>).</summary>
internal readonly struct FileRequest(RequestKind kind, SafeFileHandle handle, HandleFacts facts, long offset, long length, bool useFastPath, CancellationToken cancellationToken)
{
    /// <summary>What the request asks for.</summary>
    internal RequestKind Kind { get; } = kind;

    internal SafeFileHandle Handle { get; } = handle;

    /// <summary>What is known about <see cref="Handle"/>, learned once by whoever holds it.</summary>
    internal HandleFacts Facts { get; } = facts;

    /// <summary>Where in the file; negative when the handle has no position.</summary>
    internal long Offset { get; } = offset;

    /// <summary>The bytes the request transfers (0 for a flush or a data sync).</summary>
    internal long Length { get; } = length;

    /// <summary>Whether the page-cache paths may serve it on the caller's thread (false once one failed, or when the caller opts out).</summary>
    internal bool UseFastPath { get; } = useFastPath;

    internal CancellationToken CancellationToken { get; } = cancellationToken;

    /// <summary>A read's destination.</summary>
    internal Memory<byte> Destination { get; private init; }

    /// <summary>A write's bytes, plain or durable.</summary>
    internal ReadOnlyMemory<byte> Source { get; private init; }

    /// <summary>A scatter read's destinations, in file order.</summary>
    internal IReadOnlyList<Memory<byte>>? Destinations { get; private init; }

    /// <summary>A gather write's buffers, in file order.</summary>
    internal IReadOnlyList<ReadOnlyMemory<byte>>? Sources { get; private init; }

    /// <summary>Bytes the page cache already served before the rest of a read went on (they count in its result).</summary>
    internal int Prefix { get; private init; }

    /// <summary>Whether the request writes bytes (plain, gathered or durable).</summary>
    internal bool IsWrite => Kind is RequestKind.Write or RequestKind.WriteGather or RequestKind.WriteDurable;

    internal static FileRequest Read(SafeFileHandle handle, HandleFacts facts, Memory<byte> buffer, long offset, bool useFastPath, CancellationToken cancellationToken)
        => new(RequestKind.Read, handle, facts, offset, buffer.Length, useFastPath, cancellationToken) { Destination = buffer };

    internal static FileRequest Write(SafeFileHandle handle, HandleFacts facts, ReadOnlyMemory<byte> buffer, long offset, bool useFastPath, CancellationToken cancellationToken)
        => new(RequestKind.Write, handle, facts, offset, buffer.Length, useFastPath, cancellationToken) { Source = buffer };

    internal static FileRequest ReadScatter(SafeFileHandle handle, HandleFacts facts, IReadOnlyList<Memory<byte>> buffers, long offset, bool useFastPath, CancellationToken cancellationToken)
        => new(RequestKind.ReadScatter, handle, facts, offset, TotalLength(new ScatterBuffers(buffers)), useFastPath, cancellationToken) { Destinations = buffers };

    internal static FileRequest WriteGather(SafeFileHandle handle, HandleFacts facts, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long offset, bool useFastPath, CancellationToken cancellationToken)
        => new(RequestKind.WriteGather, handle, facts, offset, TotalLength(new GatherBuffers(buffers)), useFastPath, cancellationToken) { Sources = buffers };

    /// <summary>An <c>fsync</c>, or with <paramref name="dataOnly"/> an <c>fdatasync</c>.</summary>
    internal static FileRequest Sync(SafeFileHandle handle, HandleFacts facts, bool dataOnly, CancellationToken cancellationToken)
        => new(dataOnly ? RequestKind.DataSync : RequestKind.Flush, handle, facts, -1, 0, useFastPath: false, cancellationToken);

    /// <summary>A write whose bytes are on the device when it completes.</summary>
    internal static FileRequest WriteDurable(SafeFileHandle handle, HandleFacts facts, ReadOnlyMemory<byte> buffer, long offset, CancellationToken cancellationToken)
        => new(RequestKind.WriteDurable, handle, facts, offset, buffer.Length, useFastPath: false, cancellationToken) { Source = buffer };

    /// <summary>The rest of a read after the page cache served its first <paramref name="cached"/> bytes.</summary>
    internal FileRequest After(int cached)
        => new(Kind, Handle, Facts, Offset + cached, Length - cached, UseFastPath, CancellationToken) { Destination = Destination.Slice(cached), Prefix = Prefix + cached };

    // The bytes a scatter or gather request asks for (a struct list: no boxing on the way).
    private static long TotalLength<TBuffers>(TBuffers buffers) where TBuffers : struct, IBufferList
    {
        long total = 0;
        for (int i = 0; i < buffers.Count; i++)
        {
            total += buffers[i].Length;
        }
        return total;
    }
}
