using FASTER.core;

namespace Spindle.Clients.Devices;

/// <summary>Calls FASTER's completion callback for the shared device code (clients/Shared/Devices), which holds it untyped.</summary>
internal static class DeviceCallback
{
    internal static void Invoke(object callback, uint errorCode, uint bytes, object? context, Exception? error)
        => ((DeviceIOCompletionCallback)callback)(errorCode, bytes, context!); // FASTER's callback takes no exception
}
