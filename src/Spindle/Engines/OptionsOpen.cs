using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Engines.FastPath;
using Spindle.Handles;

namespace Spindle.Engines;

/// <summary>
/// The open with <see cref="SpindleFileOptions"/> that <see cref="SpindleFile"/> and <see cref="SpindleFileStream"/>
/// share, below both so that neither folder depends on the other: it validates the options, opens, and says what it learned.
/// </summary>
internal static class OptionsOpen
{
    /// <summary>The synchronous open, also saying what the open learned about the file.</summary>
    internal static SafeFileHandle Open(string path, SpindleFileOptions options, out OpenedFile opened)
    {
        OpenValidation.ValidateOptions(path, options);
        SafeFileHandle handle = FileOpener.Open(path, options.Mode, options.Access, options.Share, options.Options, options.PreallocationSize, options.UnixCreateMode,
            SpindleOpenFlags.For(options), out opened);
        if (!options.ReadFastPath)
        {
            ReadFastPath.DisableFor(handle, opened);
        }
        return handle;
    }

    /// <summary>The asynchronous open on the options' engine, also saying what the open learned.</summary>
    internal static ValueTask<OpenedHandle> OpenAsync(string path, SpindleFileOptions options, CancellationToken cancellationToken)
    {
        OpenValidation.ValidateOptions(path, options);
        OpenRequest request = FileOpener.Prepare(path, options.Mode, options.Access, options.Share, options.Options, options.PreallocationSize,
            options.UnixCreateMode, SpindleOpenFlags.For(options));
        ValueTask<OpenedHandle> open = EngineSelector.Get(options.Engine).OpenAsync(request, cancellationToken);
        return options.ReadFastPath ? open : WithoutReadFastPath(open);
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private static async ValueTask<OpenedHandle> WithoutReadFastPath(ValueTask<OpenedHandle> open)
    {
        OpenedHandle opened = await open.ConfigureAwait(false);
        ReadFastPath.DisableFor(opened.Handle, opened.Opened);
        return opened;
    }
}
