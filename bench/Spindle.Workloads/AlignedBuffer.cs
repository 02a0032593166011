using System.Buffers;
using System.Runtime.InteropServices;

namespace Spindle.Workloads;

/// <summary>Native memory aligned for O_DIRECT, usable as <see cref="Memory{T}"/> by System.IO and Spindle alike.</summary>
public sealed unsafe class AlignedBuffer : MemoryManager<byte>
{
    private byte* _pointer; // null once disposed
    private readonly int _length;

    /// <summary>Allocates <paramref name="length"/> zeroed bytes aligned to <paramref name="alignment"/>.</summary>
    public AlignedBuffer(int length, int alignment = 4096)
    {
        _length = length;
        _pointer = (byte*)NativeMemory.AlignedAlloc((nuint)length, (nuint)alignment);
        new Span<byte>(_pointer, length).Fill(0x5A);
    }

    /// <inheritdoc />
    public override Span<byte> GetSpan() => new(_pointer, _length);

    /// <inheritdoc />
    public override MemoryHandle Pin(int elementIndex = 0) => new(_pointer + elementIndex);

    /// <inheritdoc />
    public override void Unpin()
    {
    }

    /// <inheritdoc />
    protected override void Dispose(bool disposing)
    {
        if (_pointer != null)
        {
            NativeMemory.AlignedFree(_pointer);
            _pointer = null;
        }
    }
}
