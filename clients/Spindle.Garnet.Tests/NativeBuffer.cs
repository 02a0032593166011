using System.Runtime.InteropServices;

namespace Spindle.Garnet.Tests;

/// <summary>Aligned native memory, like Tsavorite's sector-aligned buffers.</summary>
internal sealed unsafe class NativeBuffer : IDisposable
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

/// <summary>A device call as a task: the callback's error code, byte count and exception.</summary>
internal readonly record struct DeviceResult(uint Error, uint Bytes, Exception? Exception);

internal static class DeviceCalls
{
    public static Task<DeviceResult> Write(Tsavorite.core.IDevice device, IntPtr source, ulong address, uint length)
    {
        var done = new TaskCompletionSource<DeviceResult>(TaskCreationOptions.RunContinuationsAsynchronously);
        device.WriteAsync(source, address, length, (error, bytes, context, exception) => ((TaskCompletionSource<DeviceResult>)context).SetResult(new(error, bytes, exception)), done);
        return done.Task;
    }

    public static Task<DeviceResult> Read(Tsavorite.core.IDevice device, ulong address, IntPtr destination, uint length)
    {
        var done = new TaskCompletionSource<DeviceResult>(TaskCreationOptions.RunContinuationsAsynchronously);
        device.ReadAsync(address, destination, length, (error, bytes, context, exception) => ((TaskCompletionSource<DeviceResult>)context).SetResult(new(error, bytes, exception)), done);
        return done.Task;
    }

    public static async Task ExpectWritten(Tsavorite.core.IDevice device, IntPtr source, ulong address, uint length)
    {
        DeviceResult result = await Write(device, source, address, length);
        Assert.Null(result.Exception);
        Assert.Equal(0u, result.Error);
        Assert.Equal(length, result.Bytes);
    }
}
