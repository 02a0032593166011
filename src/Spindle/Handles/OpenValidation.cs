namespace Spindle.Handles;

/// <summary>System.IO's argument validation for opening a file, with the same exception types and order.</summary>
internal static class OpenValidation
{
    internal static void ValidateArguments(string path, FileMode mode, FileAccess access, FileShare share, FileOptions options, long preallocationSize)
    {
        ValidateDefinedArguments(path, mode, access, share, options);
        ValidateCombinations(mode, access, preallocationSize);
    }

    /// <summary>The path and the enum ranges: what <see cref="FileStream"/> checks before its buffer size.</summary>
    internal static void ValidateDefinedArguments(string path, FileMode mode, FileAccess access, FileShare share, FileOptions options)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);

        // Inheritable is outside the range check, as in System.IO.
        FileShare shareWithoutInheritable = share & ~FileShare.Inheritable;
        string? badArgument = null;
        if (mode < FileMode.CreateNew || mode > FileMode.Append)
        {
            badArgument = nameof(mode);
        }
        else if (access < FileAccess.Read || access > FileAccess.ReadWrite)
        {
            badArgument = nameof(access);
        }
        else if (shareWithoutInheritable < FileShare.None || shareWithoutInheritable > (FileShare.ReadWrite | FileShare.Delete))
        {
            badArgument = nameof(share);
        }
        if (badArgument is not null)
        {
            ThrowHelper.ThrowEnumOutOfRange(badArgument);
        }

        if (options != FileOptions.None && (options & ~SpindleFileOptions.ValidFileOptions) != 0)
        {
            ThrowHelper.ThrowEnumOutOfRange(nameof(options));
        }
    }

    /// <summary>The preallocation size and the mode/access combinations System.IO refuses.</summary>
    internal static void ValidateCombinations(FileMode mode, FileAccess access, long preallocationSize)
    {
        if (preallocationSize < 0)
        {
            ThrowHelper.ThrowNeedNonNegative(nameof(preallocationSize));
        }

        if ((access & FileAccess.Write) == 0 && mode is FileMode.Truncate or FileMode.CreateNew or FileMode.Create or FileMode.Append)
        {
            throw new ArgumentException($"Combining FileMode: {mode} with FileAccess: {access} is invalid.", nameof(access));
        }
        if ((access & FileAccess.Read) != 0 && mode == FileMode.Append)
        {
            throw new ArgumentException("Append access can be requested only in write-only mode.", nameof(access));
        }
        if (preallocationSize > 0)
        {
            ValidatePreallocation(mode, access);
        }
    }

    internal static void ValidatePreallocation(FileMode mode, FileAccess access)
    {
        if ((access & FileAccess.Write) == 0)
        {
            throw new ArgumentException("Preallocation size can be requested only in write mode.", nameof(access));
        }
        if (mode != FileMode.Create && mode != FileMode.CreateNew)
        {
            throw new ArgumentException("Preallocation size can be requested only for new files.", nameof(mode));
        }
    }

    /// <summary>
    /// The checks for opening from an options object: the exception types of
    /// <c>new FileStream(path, FileStreamOptions)</c> in its order, with the parameter names of
    /// <see cref="File.OpenHandle"/> for the arguments the options carry (the options object validated
    /// its own members when they were set).
    /// </summary>
    internal static void ValidateOptions(string path, SpindleFileOptions options)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        ArgumentNullException.ThrowIfNull(options);
        ValidateArguments(path, options.Mode, options.Access, options.Share, options.Options, options.PreallocationSize);
        if (options.UnixCreateMode.HasValue && options.Mode is FileMode.Open or FileMode.Truncate)
        {
            throw new ArgumentException("UnixCreateMode can only be used with file modes that can create a new file.", nameof(options));
        }
    }
}
