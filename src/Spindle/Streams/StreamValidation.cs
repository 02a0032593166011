using Spindle.Handles;

namespace Spindle.Streams;

/// <summary><see cref="FileStream"/>'s constructor checks, with its exception types and order.</summary>
internal static class StreamValidation
{
    internal static void ValidatePathArguments(string path, FileMode mode, FileAccess access, FileShare share, int bufferSize, FileOptions options)
    {
        OpenValidation.ValidateDefinedArguments(path, mode, access, share, options);
        // The buffer size is checked before the mode/access combinations, as in System.IO.
        if (bufferSize < 0)
        {
            ThrowHelper.ThrowNeedNonNegative(nameof(bufferSize));
        }
        OpenValidation.ValidateCombinations(mode, access, preallocationSize: 0);
    }

    internal static void ValidateOptions(string path, SpindleFileOptions options)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        ArgumentNullException.ThrowIfNull(options);
        if ((options.Access & FileAccess.Read) != 0 && options.Mode == FileMode.Append)
        {
            throw new ArgumentException("Append access can be requested only in write-only mode.", nameof(options));
        }
        if ((options.Access & FileAccess.Write) == 0 && options.Mode is FileMode.Truncate or FileMode.CreateNew or FileMode.Create or FileMode.Append)
        {
            throw new ArgumentException($"Combining FileMode: {options.Mode} with FileAccess: {options.Access} is invalid.", nameof(options));
        }
        if (options.PreallocationSize > 0)
        {
            OpenValidation.ValidatePreallocation(options.Mode, options.Access);
        }
        if (options.UnixCreateMode.HasValue && options.Mode is FileMode.Truncate or FileMode.Open)
        {
            throw new ArgumentException("UnixCreateMode can only be used with file modes that can create a new file.", nameof(options));
        }
    }

    /// <summary>Checks the path before the options, as FileStream does, then copies the options.</summary>
    internal static SpindleFileOptions ToSpindleOptions(string path, FileStreamOptions options)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        ArgumentNullException.ThrowIfNull(options);
        return new SpindleFileOptions(options);
    }

    internal static void ValidateHandle(Microsoft.Win32.SafeHandles.SafeFileHandle handle, FileAccess access, int bufferSize)
    {
        ArgumentNullException.ThrowIfNull(handle);
        if (handle.IsInvalid)
        {
            throw new ArgumentException("Invalid handle.", nameof(handle));
        }
        if (access < FileAccess.Read || access > FileAccess.ReadWrite)
        {
            throw new ArgumentOutOfRangeException(nameof(access), "Enum value was out of legal range.");
        }
        if (bufferSize < 0)
        {
            ThrowHelper.ThrowNeedNonNegative(nameof(bufferSize));
        }
        if (handle.IsClosed)
        {
            ThrowHelper.ThrowFileClosed();
        }
    }

    internal static void ValidateHandle(Microsoft.Win32.SafeHandles.SafeFileHandle handle, FileAccess access, int bufferSize, bool isAsync)
    {
        ValidateHandle(handle, access, bufferSize);
        if (isAsync && !handle.IsAsync)
        {
            throw new ArgumentException("The handle was not opened for asynchronous I/O, but the stream was asked to be asynchronous.", nameof(handle));
        }
        if (!isAsync && handle.IsAsync)
        {
            throw new ArgumentException("The handle was opened for asynchronous I/O, but the stream was asked to be synchronous.", nameof(handle));
        }
    }
}
