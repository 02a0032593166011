using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Engines;
using Spindle.Handles;

namespace Spindle;

public static partial class SpindleFile
{
    /// <summary>
    /// Opens a file asynchronously and returns its handle, with every rule of
    /// <see cref="OpenHandle(string, FileMode, FileAccess, FileShare, FileOptions, long)"/> (and of
    /// <see cref="File.OpenHandle"/> on Linux). On the io_uring engine the <c>open</c> is a ring request, so a path
    /// lookup that reads directories from the disk, or a slow or network file system, holds no thread; other engines
    /// run the open on a thread-pool thread (<see cref="IoEngine.Sync"/>: on the caller's thread).
    /// </summary>
    /// <param name="path">The path of the file, relative or absolute.</param>
    /// <param name="mode">Whether to create, open or truncate the file.</param>
    /// <param name="access">The access the handle has.</param>
    /// <param name="share">The access other handles may have, emulated with advisory <c>flock</c>.</param>
    /// <param name="options">Advanced options.</param>
    /// <param name="preallocationSize">
    /// The initial allocation size for a created or overwritten file, as a <c>fallocate(FALLOC_FL_KEEP_SIZE)</c> hint.
    /// </param>
    /// <param name="cancellationToken">
    /// Cancels the open. A cancelled open leaves no descriptor behind: when the kernel opened the file before the
    /// cancellation reached it, the descriptor is closed before the task completes as cancelled. An open that has
    /// already returned from the kernel finishes (the lock, truncation and preallocation are not interrupted).
    /// </param>
    /// <returns>An open handle that the caller disposes.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty or contains a NUL character, or the arguments contradict each other.</exception>
    /// <exception cref="ArgumentOutOfRangeException">An enum argument is out of range, or <paramref name="preallocationSize"/> is negative.</exception>
    /// <exception cref="FileNotFoundException">The file does not exist and the mode does not create it (through the task, as every error of the open).</exception>
    /// <exception cref="DirectoryNotFoundException">A directory of the path does not exist.</exception>
    /// <exception cref="UnauthorizedAccessException">Access is denied, or the path is a directory.</exception>
    /// <exception cref="PathTooLongException">The path or a component of it is too long.</exception>
    /// <exception cref="IOException">Any other error, for example a sharing violation or a full disk; <see cref="Exception.HResult"/> is the errno.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled (through the task).</exception>
    public static ValueTask<SafeFileHandle> OpenHandleAsync(string path, FileMode mode = FileMode.Open, FileAccess access = FileAccess.Read,
        FileShare share = FileShare.Read, FileOptions options = FileOptions.None, long preallocationSize = 0,
        CancellationToken cancellationToken = default)
    {
        if (Portable.PassThrough.Enabled)
        {
            OpenValidation.ValidateArguments(path, mode, access, share, options, preallocationSize);
            return Portable.PassThrough.OpenAsync(() => File.OpenHandle(path, mode, access, share, options, preallocationSize), cancellationToken);
        }
        OpenRequest request = FileOpener.Prepare(path, mode, access, share, options, preallocationSize, unixCreateMode: null, SpindleOpenFlags.For(options));
        return HandleOf(EngineSelector.Default.OpenAsync(request, cancellationToken));
    }

    /// <summary>
    /// Opens a file asynchronously with the mode, access, share, options, preallocation, create mode and engine of
    /// <paramref name="options"/>: every rule of <see cref="OpenHandle(string, SpindleFileOptions)"/>, with the open
    /// as <see cref="OpenHandleAsync(string, FileMode, FileAccess, FileShare, FileOptions, long, CancellationToken)"/>
    /// makes it on <see cref="SpindleFileOptions.Engine"/>. <see cref="SpindleFileOptions.BufferSize"/> does not apply to a handle.
    /// </summary>
    /// <param name="path">The path of the file, relative or absolute.</param>
    /// <param name="options">How to open the file.</param>
    /// <param name="cancellationToken">Cancels the open; a cancelled open leaves no descriptor behind.</param>
    /// <returns>An open handle that the caller disposes.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> or <paramref name="options"/> is null.</exception>
    /// <exception cref="ArgumentException">The options contradict each other.</exception>
    /// <exception cref="IOException">The file could not be opened (through the task); see <see cref="OpenHandle(string, FileMode, FileAccess, FileShare, FileOptions, long)"/>.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled (through the task).</exception>
    public static ValueTask<SafeFileHandle> OpenHandleAsync(string path, SpindleFileOptions options, CancellationToken cancellationToken = default)
    {
        if (Portable.PassThrough.Enabled)
        {
            OpenValidation.ValidateOptions(path, options);
            return Portable.PassThrough.OpenAsync(() => Portable.PassThroughFile.OpenHandle(path, options), cancellationToken);
        }
        return HandleOf(OptionsOpen.OpenAsync(path, options, cancellationToken));
    }

    /// <summary>
    /// The content methods' asynchronous open: as the public overload with others allowed to read, on the default
    /// engine, for a handle that lives for one call (<see cref="OpenRequest.ForOneCall"/>): the caller honours
    /// <see cref="OpenedHandle.PendingStatusFlags"/> (<see cref="Files.FileContent.PrepareForEngine"/>) and disposes the handle.
    /// </summary>
    internal static ValueTask<OpenedHandle> OpenAsync(string path, FileMode mode, FileAccess access, FileOptions options, long preallocationSize,
        CancellationToken cancellationToken)
    {
        OpenRequest request = FileOpener.Prepare(path, mode, access, FileShare.Read, options, preallocationSize, unixCreateMode: null, SpindleOpenFlags.For(options));
        request.ForOneCall = true;
        return EngineSelector.Default.OpenAsync(request, cancellationToken);
    }

    private static ValueTask<SafeFileHandle> HandleOf(ValueTask<OpenedHandle> open)
        => open.IsCompletedSuccessfully ? new ValueTask<SafeFileHandle>(open.Result.Handle) : AwaitHandle(open);

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private static async ValueTask<SafeFileHandle> AwaitHandle(ValueTask<OpenedHandle> open) => (await open.ConfigureAwait(false)).Handle;
}
