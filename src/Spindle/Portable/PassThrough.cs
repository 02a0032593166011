using Spindle.Diagnostics;

namespace Spindle.Portable;

/// <summary>
/// Whether Spindle hands every call to System.IO instead of making Linux system calls: always off Linux
/// (Windows has no libc; macOS has other flag values and no <c>statx</c>, <c>preadv2</c> or io_uring), and on
/// Linux when forced, so that the pass-through runs the same differential tests as the Linux code.
/// </summary>
/// <remarks>
/// Decided once per process, before the first call: a <c>static readonly</c> field, so the JIT folds the
/// check in every entry point into nothing.
/// </remarks>
internal static class PassThrough
{
    /// <summary>The AppContext switch (runtimeconfig.json) that forces the pass-through on Linux.</summary>
    internal const string SwitchName = SpindleSwitches.PassThroughName;

    /// <summary>The environment variable (<c>1</c> or <c>true</c>) that forces the pass-through on Linux.</summary>
    internal const string EnvironmentName = SpindleSwitches.PassThroughVariable;

    /// <summary>True when every call goes to System.IO.</summary>
    internal static readonly bool Enabled = !OperatingSystem.IsLinux() || SpindleSwitches.PassThrough;

    /// <summary>The exception for a Linux-only feature used elsewhere (or in forced pass-through).</summary>
    internal static PlatformNotSupportedException LinuxOnly(string feature) => new(
        $"{feature} is only available on Linux; on {OperatingSystemName} Spindle passes through to System.IO, which has no equivalent.");

    /// <summary>
    /// The engine that actually runs a request: System.IO's asynchronous I/O, which Spindle reports as
    /// <see cref="IoEngine.ThreadPool"/> (what it is on Unix); asking for another engine counts a fallback.
    /// </summary>
    internal static IoEngine Engine(IoEngine requested)
    {
        if (requested is < IoEngine.Auto or > IoEngine.IoUring)
        {
            ThrowHelper.ThrowEnumOutOfRange("engine");
        }
        if (requested is IoEngine.Sync or IoEngine.IoUring)
        {
            SpindleMetrics.Fallback();
        }
        return IoEngine.ThreadPool;
    }

    private static string OperatingSystemName =>
        OperatingSystem.IsLinux() ? "Linux with the System.IO pass-through forced" : System.Runtime.InteropServices.RuntimeInformation.OSDescription;

    /// <summary>
    /// An open passed through to System.IO, run on a pool thread so the caller never waits in it. Its token cancels
    /// the caller's wait at any time, as on Linux: an open that cannot be interrupted (a FIFO waiting for its other end)
    /// goes on, and what it opens after the caller was told "cancelled" is disposed.
    /// </summary>
    internal static ValueTask<T> OpenAsync<T>(Func<T> open, CancellationToken cancellationToken) where T : IDisposable
    {
        Task<T> opening = Task.Run(open, cancellationToken);
        return cancellationToken.CanBeCanceled ? new(WaitCancellably(opening, cancellationToken)) : new(opening);
    }

    private static async Task<T> WaitCancellably<T>(Task<T> opening, CancellationToken cancellationToken) where T : IDisposable
    {
        try
        {
            return await opening.WaitAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (!opening.IsCanceled)
        {
            _ = opening.ContinueWith(static late => late.Result.Dispose(), CancellationToken.None,
                TaskContinuationOptions.OnlyOnRanToCompletion | TaskContinuationOptions.ExecuteSynchronously, TaskScheduler.Default);
            throw;
        }
    }
}
