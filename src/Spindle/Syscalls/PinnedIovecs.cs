using System.Buffers;
using System.Runtime.InteropServices;
using Spindle.Interop;

namespace Spindle.Syscalls;

/// <summary>A list of buffers as the iovec paths read them: <see cref="Memory{T}"/> or <see cref="ReadOnlyMemory{T}"/> elements alike.</summary>
internal interface IBufferList
{
    int Count { get; }

    ReadOnlyMemory<byte> this[int index] { get; }
}

/// <summary>The buffers of a scatter read.</summary>
internal readonly struct ScatterBuffers(IReadOnlyList<Memory<byte>> buffers) : IBufferList
{
    public int Count => buffers.Count;

    public ReadOnlyMemory<byte> this[int index] => buffers[index];
}

/// <summary>The buffers of a gather write.</summary>
internal readonly struct GatherBuffers(IReadOnlyList<ReadOnlyMemory<byte>> buffers) : IBufferList
{
    public int Count => buffers.Count;

    public ReadOnlyMemory<byte> this[int index] => buffers[index];
}

/// <summary>What runs while a list of buffers is pinned: the system call over their iovecs.</summary>
internal unsafe interface IIovecCall
{
    long Run(IoVector* vectors, int count);
}

/// <summary>
/// A list of buffers pinned and described as iovecs: the one place Spindle does that. Two forms, one rule (every pin
/// is disposed exactly once, after the kernel is done with the memory):
/// <list type="bullet">
/// <item><see cref="Call"/> pins for one system call that finishes before returning (the synchronous scatter/gather
/// paths): up to <see cref="FixedPinLimit"/> array-backed buffers with <c>fixed</c>, one stack frame each (no GC
/// handle), longer lists as the held form over stack iovecs.</item>
/// <item><see cref="Pin"/> holds the pins until <see cref="Dispose"/>: an io_uring request, whose kernel reads the
/// iovecs and the buffers after the submitting call returned, keeps it in a field and disposes it on completion.</item>
/// </list>
/// Allocation-free in steady state: the pin array is pooled, the iovecs are the caller's storage (stack, or memory the
/// caller reuses) and native memory only for a list longer than that storage.
/// </summary>
internal unsafe struct PinnedIovecs : IDisposable
{
    /// <summary>Lists up to this many buffers are pinned with <c>fixed</c> by <see cref="Call"/>.</summary>
    internal const int FixedPinLimit = 8;

    // Longer lists keep their iovecs on the stack up to this many buffers in Call.
    private const int StackIovecs = 32;

    private MemoryHandle[]? _pins; // rented; _pins[0..Count) hold the pins, released by Dispose
    private IoVector* _owned;      // iovecs allocated here because the caller's storage was too small, else null

    /// <summary>The iovecs, one per buffer.</summary>
    internal IoVector* Vectors { readonly get; private set; }

    /// <summary>How many buffers are pinned.</summary>
    internal int Count { readonly get; private set; }

    /// <summary>
    /// Pins the first <paramref name="count"/> of <paramref name="buffers"/> and describes them in
    /// <paramref name="storage"/> (room for <paramref name="capacity"/> iovecs; native memory owned by the result when
    /// the list is longer). The caller disposes the result once the kernel is done with the buffers.
    /// </summary>
    internal static PinnedIovecs Pin<TBuffers>(TBuffers buffers, int count, IoVector* storage, int capacity) where TBuffers : IBufferList
    {
        var pinned = new PinnedIovecs { _pins = ArrayPool<MemoryHandle>.Shared.Rent(count) };
        pinned.Vectors = count <= capacity ? storage : pinned._owned = (IoVector*)NativeMemory.Alloc((nuint)count, (nuint)sizeof(IoVector));
        try
        {
            for (int i = 0; i < count; i++)
            {
                ReadOnlyMemory<byte> buffer = buffers[i];
                pinned._pins[i] = buffer.Pin();
                pinned.Count = i + 1;
                pinned.Vectors[i] = new IoVector { Base = (byte*)pinned._pins[i].Pointer, Count = (nuint)buffer.Length };
            }
            return pinned;
        }
        catch
        {
            pinned.Dispose(); // a memory manager's Pin threw: what was pinned is released
            throw;
        }
    }

    /// <summary>Pins the first <paramref name="count"/> of <paramref name="buffers"/> for the length of <paramref name="call"/>.</summary>
    internal static long Call<TBuffers, TCall>(TBuffers buffers, int count, ref TCall call)
        where TBuffers : IBufferList
        where TCall : struct, IIovecCall
    {
        if (count <= FixedPinLimit)
        {
            IoVector* vectors = stackalloc IoVector[FixedPinLimit];
            return CallFixed(buffers, 0, count, vectors, ref call);
        }
        IoVector* stack = stackalloc IoVector[StackIovecs];
        using PinnedIovecs pinned = Pin(buffers, count, stack, StackIovecs);
        return call.Run(pinned.Vectors, count);
    }

    // Pins buffers[index..count) one per stack frame: `fixed` for array-backed memory (no GC handle, no pooled array),
    // the memory manager's Pin otherwise, as Memory.Pin would; then the call.
    private static long CallFixed<TBuffers, TCall>(TBuffers buffers, int index, int count, IoVector* vectors, ref TCall call)
        where TBuffers : IBufferList
        where TCall : struct, IIovecCall
    {
        if (index == count)
        {
            return call.Run(vectors, count);
        }
        ReadOnlyMemory<byte> buffer = buffers[index];
        if (MemoryMarshal.TryGetMemoryManager<byte, MemoryManager<byte>>(buffer, out _))
        {
            using MemoryHandle pin = buffer.Pin();
            vectors[index] = new IoVector { Base = (byte*)pin.Pointer, Count = (nuint)buffer.Length };
            return CallFixed(buffers, index + 1, count, vectors, ref call);
        }
        fixed (byte* pointer = &MemoryMarshal.GetReference(buffer.Span))
        {
            vectors[index] = new IoVector { Base = pointer, Count = (nuint)buffer.Length };
            return CallFixed(buffers, index + 1, count, vectors, ref call);
        }
    }

    /// <summary>The total length of <paramref name="count"/> iovecs.</summary>
    internal static long TotalOf(IoVector* vectors, int count)
    {
        long total = 0;
        for (int i = 0; i < count; i++)
        {
            total += (long)vectors[i].Count;
        }
        return total;
    }

    /// <summary>Unpins every buffer and frees what this allocated; a second call finds nothing to do.</summary>
    public void Dispose()
    {
        MemoryHandle[]? pins = _pins;
        _pins = null;
        if (pins is not null)
        {
            for (int i = 0; i < Count; i++)
            {
                pins[i].Dispose();
            }
            ArrayPool<MemoryHandle>.Shared.Return(pins, clearArray: true);
        }
        NativeMemory.Free(_owned);
        _owned = null;
        Vectors = null;
        Count = 0;
    }
}
