using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Engines;
using Spindle.Handles;
using Spindle.Streams;

namespace Spindle;

public partial class SpindleFileStream
{
    /// <summary>
    /// Opens a file asynchronously and returns a stream over it: what <see cref="SpindleFileStream(string, SpindleFileOptions)"/>
    /// does, with the open made as <see cref="SpindleFile.OpenHandleAsync(string, SpindleFileOptions, CancellationToken)"/>
    /// makes it (on the ring where the stream's engine is io_uring), so that no thread waits for a slow path lookup.
    /// </summary>
    /// <param name="path">The path of the file, relative or absolute.</param>
    /// <param name="options">How to open the file and run the stream.</param>
    /// <param name="cancellationToken">Cancels the open; a cancelled open leaves no descriptor behind.</param>
    /// <returns>The open stream, which the caller disposes.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> or <paramref name="options"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty, or the options contradict each other.</exception>
    /// <exception cref="FileNotFoundException">The file does not exist and the mode does not create it (through the task, as every error of the open).</exception>
    /// <exception cref="UnauthorizedAccessException">Access is denied, or the path is a directory.</exception>
    /// <exception cref="IOException">Any other error, for example a sharing violation.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled (through the task).</exception>
    public static ValueTask<SpindleFileStream> OpenAsync(string path, SpindleFileOptions options, CancellationToken cancellationToken = default)
    {
        StreamValidation.ValidateOptions(path, options);
        if (Portable.PassThrough.Enabled)
        {
            return Portable.PassThrough.OpenAsync(() => new SpindleFileStream(path, options), cancellationToken);
        }
        ValueTask<OpenedHandle> open = OptionsOpen.OpenAsync(path, options, cancellationToken);
        return open.IsCompletedSuccessfully ? new ValueTask<SpindleFileStream>(new SpindleFileStream(open.Result, options)) : OpenAfterAsync(open, options);
    }

    /// <summary>
    /// Opens a file asynchronously with a <see cref="FileStreamOptions"/>, so that code moving from <see cref="FileStream"/>
    /// only renames the type; the stream uses <see cref="IoEngine.Auto"/>. See <see cref="OpenAsync(string, SpindleFileOptions, CancellationToken)"/>.
    /// </summary>
    /// <param name="path">The path of the file, relative or absolute.</param>
    /// <param name="options">How to open the file.</param>
    /// <param name="cancellationToken">Cancels the open; a cancelled open leaves no descriptor behind.</param>
    /// <returns>The open stream, which the caller disposes.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> or <paramref name="options"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty, or the options contradict each other.</exception>
    /// <exception cref="IOException">The file could not be opened (through the task).</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled (through the task).</exception>
    public static ValueTask<SpindleFileStream> OpenAsync(string path, FileStreamOptions options, CancellationToken cancellationToken = default)
        => OpenAsync(path, StreamValidation.ToSpindleOptions(path, options), cancellationToken);

    // The stream of an asynchronous open: as the path constructor after its open.
    private SpindleFileStream(in OpenedHandle opened, SpindleFileOptions options)
    {
        bool isAsync = (options.Options & FileOptions.Asynchronous) != 0;
        _strategy = StrategyFactory.ForOpenedFile(this, opened.Handle, options.Mode, options.Access, options.BufferSize, isAsync, options.Engine,
            SpindleOpenFlags.For(options), opened.Opened);
        SuppressFinalizerIfUnneeded();
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private static async ValueTask<SpindleFileStream> OpenAfterAsync(ValueTask<OpenedHandle> open, SpindleFileOptions options)
        => new SpindleFileStream(await open.ConfigureAwait(false), options);
}
