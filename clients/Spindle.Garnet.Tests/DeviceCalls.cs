namespace Spindle.Garnet.Tests;

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
