using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Handles;

namespace Spindle.Portable;

/// <summary><see cref="SpindleFile"/> in pass-through mode: System.IO opens and copies; Linux-only options throw.</summary>
internal static class PassThroughFile
{
    internal static SafeFileHandle OpenHandle(string path, SpindleFileOptions options)
    {
        OpenValidation.ValidateOptions(path, options);
        return Open(path, ToFileStreamOptions(options, bufferSize: 0));
    }

    /// <summary>Opens through System.IO; a create mode needs <see cref="FileStreamOptions"/>, which only a stream takes.</summary>
    internal static SafeFileHandle Open(string path, FileStreamOptions options)
    {
        if (options.UnixCreateMode is null)
        {
            return File.OpenHandle(path, options.Mode, options.Access, options.Share, options.Options, options.PreallocationSize);
        }
        // An unbuffered stream holds nothing to flush: keep its handle, drop the stream without its finalizer.
        var stream = new FileStream(path, options);
        GC.SuppressFinalize(stream);
        return stream.SafeFileHandle;
    }

    /// <summary>
    /// The System.IO options for Spindle's: Linux-only requests throw <see cref="PlatformNotSupportedException"/>,
    /// except direct I/O with <see cref="SpindleFileOptions.DirectIOFallback"/>, which opens buffered as promised
    /// and counts the fallback.
    /// </summary>
    internal static FileStreamOptions ToFileStreamOptions(SpindleFileOptions options, int bufferSize)
    {
        if (options.AtomicAppend)
        {
            throw PassThrough.LinuxOnly(nameof(SpindleFileOptions.AtomicAppend));
        }
        if (options.DirectIO)
        {
            if (!options.DirectIOFallback)
            {
                throw PassThrough.LinuxOnly(nameof(SpindleFileOptions.DirectIO));
            }
            SpindleMetrics.Fallback();
        }
        var result = new FileStreamOptions
        {
            Mode = options.Mode,
            Access = options.Access,
            Share = options.Share,
            Options = options.Options,
            PreallocationSize = options.PreallocationSize,
            BufferSize = bufferSize,
        };
        if (options.UnixCreateMode is UnixFileMode createMode)
        {
            if (OperatingSystem.IsWindows())
            {
                throw new PlatformNotSupportedException("UnixCreateMode is not supported on Windows, as in System.IO.");
            }
            result.UnixCreateMode = createMode;
        }
        return result;
    }

    /// <summary>System.IO's copy on a pool thread; progress is reported once, with the source's length, when it is done.</summary>
    internal static Task CopyAsync(string source, string destination, bool overwrite, IProgress<long>? progress, CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return Task.FromCanceled(cancellationToken);
        }
        return Task.Run(() =>
        {
            File.Copy(source, destination, overwrite);
            progress?.Report(new FileInfo(destination).Length);
        }, cancellationToken);
    }
}
