namespace Spindle.Interop;

/// <summary>
/// Turns an errno into the exception System.IO throws for it on Unix, with the same type, message
/// shape and <see cref="Exception.HResult"/> (the raw errno for <see cref="IOException"/>).
/// </summary>
internal static class IoErrors
{
    internal static Exception ForErrno(int errno, string? path, bool isDirectoryError = false)
    {
        switch (errno)
        {
            case Errno.ENOENT:
                if (isDirectoryError)
                {
                    return new DirectoryNotFoundException(path is null ? "Could not find a part of the path." : $"Could not find a part of the path '{path}'.");
                }
                return path is null
                    ? new FileNotFoundException("Unable to find the specified file.")
                    : new FileNotFoundException($"Could not find file '{path}'.", path);

            case Errno.EACCES:
            case Errno.EBADF:
            case Errno.EPERM:
                return new UnauthorizedAccessException(path is null ? "Access to the path is denied." : $"Access to the path '{path}' is denied.",
                    new IOException(Errno.Message(errno), errno));

            case Errno.ENAMETOOLONG:
                return new PathTooLongException(path is null
                    ? "The specified file name or path is too long, or a component of the specified path is too long."
                    : $"The path '{path}' is too long, or a component of the specified path is too long.");

            case Errno.EWOULDBLOCK:
                return new IOException(path is null
                    ? "The process cannot access the file because it is being used by another process."
                    : $"The process cannot access the file '{path}' because it is being used by another process.", errno);

            case Errno.ECANCELED:
                return new OperationCanceledException();

            case Errno.EFBIG:
                return new ArgumentOutOfRangeException("value", "Specified file length was too large for the file system.");

            case Errno.EEXIST:
                return new IOException(path is null ? "The file already exists." : $"The file '{path}' already exists.", errno);

            default:
                return Generic(errno, path);
        }
    }

    /// <summary>An <see cref="IOException"/> with the C library's text, the path and the errno as HResult.</summary>
    internal static IOException Generic(int errno, string? path)
    {
        string message = Errno.Message(errno);
        return new IOException(string.IsNullOrEmpty(path) ? message : $"{message} : '{path}'", errno);
    }
}
