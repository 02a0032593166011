namespace Spindle;

/// <summary>
/// Every process-wide setting Spindle reads — AppContext switches (runtimeconfig.json,
/// <c>RuntimeHostConfigurationOption</c>) and environment variables — with its default, read one way:
/// the AppContext value first, then the environment variable where there is one. Each is read once, by
/// the component that needs it, at its first use.
/// </summary>
/// <remarks>
/// <list type="table">
/// <item><term><c>Spindle.IoEngine</c> / <c>SPINDLE_IO_ENGINE</c></term><description>the engine behind <c>Auto</c>: sync, threadpool, iouring, auto (default auto: io_uring when the kernel allows it, else the thread pool); an unknown name is reported (an event and the fallback counter) and auto is used</description></item>
/// <item><term><c>Spindle.DisableIoUring</c></term><description>true: io_uring is never set up (default false)</description></item>
/// <item><term><c>Spindle.DisableReadFastPath</c></term><description>true: no page-cache read on the caller's thread (default false)</description></item>
/// <item><term><c>Spindle.DisableWriteFastPath</c></term><description>true: no small buffered write on the caller's thread (default false)</description></item>
/// <item><term><c>Spindle.PassThroughToSystemIO</c> / <c>SPINDLE_PASS_THROUGH</c></term><description>true or 1: every call goes to System.IO (default false on Linux)</description></item>
/// <item><term><c>System.IO.DisableFileLocking</c> / <c>DOTNET_SYSTEM_IO_DISABLEFILELOCKING</c></term><description>System.IO's own: true or 1 turns the advisory locks of FileShare off (default false)</description></item>
/// </list>
/// </remarks>
internal static class SpindleSwitches
{
    internal const string IoEngineName = "Spindle.IoEngine";
    internal const string IoEngineVariable = "SPINDLE_IO_ENGINE";
    internal const string DisableIoUringName = "Spindle.DisableIoUring";
    internal const string DisableReadFastPathName = "Spindle.DisableReadFastPath";
    internal const string DisableWriteFastPathName = "Spindle.DisableWriteFastPath";
    internal const string PassThroughName = "Spindle.PassThroughToSystemIO";
    internal const string PassThroughVariable = "SPINDLE_PASS_THROUGH";
    internal const string DisableFileLockingName = "System.IO.DisableFileLocking";
    internal const string DisableFileLockingVariable = "DOTNET_SYSTEM_IO_DISABLEFILELOCKING";

    /// <summary>The engine name configured for <c>Auto</c>, and where it came from; null when none is.</summary>
    internal static (string? Value, string Source) IoEngine()
    {
        if (AppContext.GetData(IoEngineName) is string configured)
        {
            return (configured, IoEngineName);
        }
        return (Environment.GetEnvironmentVariable(IoEngineVariable), IoEngineVariable);
    }

    internal static bool DisableIoUring => Flag(DisableIoUringName, variable: null, defaultValue: false);


    internal static bool DisableReadFastPath => Flag(DisableReadFastPathName, variable: null, defaultValue: false);

    internal static bool DisableWriteFastPath => Flag(DisableWriteFastPathName, variable: null, defaultValue: false);

    internal static bool PassThrough => Flag(PassThroughName, PassThroughVariable, defaultValue: false);

    internal static bool DisableFileLocking => Flag(DisableFileLockingName, DisableFileLockingVariable, defaultValue: false);

    /// <summary>A boolean setting: the AppContext switch if set, else the variable (<c>1</c> or <c>true</c>), else the default.</summary>
    private static bool Flag(string name, string? variable, bool defaultValue)
    {
        if (AppContext.TryGetSwitch(name, out bool value))
        {
            return value;
        }
        string? text = variable is null ? null : Environment.GetEnvironmentVariable(variable)?.Trim();
        if (string.IsNullOrEmpty(text))
        {
            return defaultValue;
        }
        return text == "1" || text.Equals("true", StringComparison.OrdinalIgnoreCase);
    }
}
