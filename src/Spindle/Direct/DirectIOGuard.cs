using System.Buffers;
using System.Diagnostics.CodeAnalysis;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;

namespace Spindle.Direct;

/// <summary>
/// Checks a call on an O_DIRECT handle before it reaches the kernel: the offset, every buffer's length
/// and every buffer's address must be aligned, or an <see cref="ArgumentException"/> names the value
/// and the alignment required. On any other handle it costs one static read.
/// </summary>
internal static unsafe class DirectIOGuard
{
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void Check(SafeFileHandle handle, ReadOnlySpan<byte> buffer, long fileOffset)
    {
        if (DirectHandles.Any && DirectHandles.TryGet(handle, out DirectIOAlignment alignment))
        {
            CheckOne(alignment, (nuint)Unsafe.AsPointer(ref MemoryMarshal.GetReference(buffer)), buffer.Length, fileOffset, index: -1);
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void Check(SafeFileHandle handle, ReadOnlyMemory<byte> buffer, long fileOffset)
    {
        if (DirectHandles.Any && DirectHandles.TryGet(handle, out DirectIOAlignment alignment))
        {
            CheckMemory(alignment, buffer, fileOffset, index: -1);
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void Check(SafeFileHandle handle, IReadOnlyList<Memory<byte>> buffers, long fileOffset)
    {
        if (DirectHandles.Any && DirectHandles.TryGet(handle, out DirectIOAlignment alignment))
        {
            CheckAll(alignment, buffers, fileOffset);
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void Check(SafeFileHandle handle, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset)
    {
        if (DirectHandles.Any && DirectHandles.TryGet(handle, out DirectIOAlignment alignment))
        {
            CheckAll(alignment, buffers, fileOffset);
        }
    }

    // The same checks from the alignment the handle's facts carry (default: not a direct handle, nothing to check),
    // for the entries that looked the facts up already: no second lookup per call.

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void Check(DirectIOAlignment alignment, ReadOnlyMemory<byte> buffer, long fileOffset)
    {
        if (alignment.OffsetAlignment != 0)
        {
            CheckMemory(alignment, buffer, fileOffset, index: -1);
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void Check(DirectIOAlignment alignment, IReadOnlyList<Memory<byte>> buffers, long fileOffset)
    {
        if (alignment.OffsetAlignment != 0)
        {
            CheckAll(alignment, buffers, fileOffset);
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    internal static void Check(DirectIOAlignment alignment, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset)
    {
        if (alignment.OffsetAlignment != 0)
        {
            CheckAll(alignment, buffers, fileOffset);
        }
    }

    private static void CheckAll(DirectIOAlignment alignment, IReadOnlyList<Memory<byte>> buffers, long fileOffset)
    {
        CheckOffset(alignment, fileOffset);
        for (int i = 0; i < buffers.Count; i++)
        {
            CheckMemory(alignment, buffers[i], -1, i);
        }
    }

    private static void CheckAll(DirectIOAlignment alignment, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long fileOffset)
    {
        CheckOffset(alignment, fileOffset);
        for (int i = 0; i < buffers.Count; i++)
        {
            CheckMemory(alignment, buffers[i], -1, i);
        }
    }

    private static void CheckMemory(DirectIOAlignment alignment, ReadOnlyMemory<byte> buffer, long fileOffset, int index)
    {
        // The address of memory the engine will pin; a pool buffer's never moves.
        using MemoryHandle pin = buffer.Pin();
        CheckOne(alignment, (nuint)pin.Pointer, buffer.Length, fileOffset, index);
    }

    private static void CheckOne(DirectIOAlignment alignment, nuint address, int length, long fileOffset, int index)
    {
        CheckOffset(alignment, fileOffset);
        if (!alignment.IsAligned(length))
        {
            ThrowLength(index, length, alignment);
        }
        if (length != 0 && !alignment.IsAligned(address))
        {
            ThrowAddress(index, address, alignment);
        }
    }

    private static void CheckOffset(DirectIOAlignment alignment, long fileOffset)
    {
        // A negative offset means a handle without positions, where no offset is used.
        if (fileOffset > 0 && !alignment.IsAligned(fileOffset))
        {
            ThrowOffset(fileOffset, alignment);
        }
    }

    [DoesNotReturn]
    private static void ThrowOffset(long fileOffset, DirectIOAlignment alignment) => throw new ArgumentException(
        $"The file offset {fileOffset} is not a multiple of {alignment.OffsetAlignment} bytes, the alignment unbuffered (O_DIRECT) I/O on this file requires.",
        "fileOffset");

    [DoesNotReturn]
    private static void ThrowLength(int index, int length, DirectIOAlignment alignment) => throw new ArgumentException(
        $"The length {length} of {Name(index)} is not a multiple of {alignment.OffsetAlignment} bytes, the alignment unbuffered (O_DIRECT) I/O on this file requires.",
        index < 0 ? "buffer" : "buffers");

    [DoesNotReturn]
    private static void ThrowAddress(int index, nuint address, DirectIOAlignment alignment) => throw new ArgumentException(
        $"The address 0x{address:X} of {Name(index)} is not a multiple of {alignment.MemoryAlignment} bytes, the alignment unbuffered (O_DIRECT) I/O on this file requires; rent buffers from {nameof(AlignedMemoryPool)}.{nameof(AlignedMemoryPool.Shared)}.",
        index < 0 ? "buffer" : "buffers");

    private static string Name(int index) => index < 0 ? "the buffer" : $"buffers[{index}]";
}
