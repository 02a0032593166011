using System.Runtime.InteropServices;

namespace Spindle.Tests.Infrastructure;

/// <summary>
/// Zeroed, aligned native memory that a test hands to an API by address (the sector-aligned buffers of FASTER's and
/// Garnet's devices), freed on dispose. Shared with the clients' test projects, which link this file.
/// </summary>
public sealed unsafe class NativeBuffer : IDisposable
{
    private readonly int _length;

    public NativeBuffer(int length, int alignment = 4096)
    {
        _length = length;
        Address = (IntPtr)NativeMemory.AlignedAlloc((nuint)length, (nuint)alignment);
        Span.Clear();
    }

    public IntPtr Address { get; private set; }

    public Span<byte> Span => new((void*)Address, _length);

    public void Dispose()
    {
        if (Address != IntPtr.Zero)
        {
            NativeMemory.AlignedFree((void*)Address);
            Address = IntPtr.Zero;
        }
    }
}
