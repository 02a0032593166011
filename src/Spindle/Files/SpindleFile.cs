using Microsoft.Win32.SafeHandles;
using Spindle.Engines;
using Spindle.Handles;

namespace Spindle;

/// <summary>Opens files for Spindle; the counterpart of the handle-opening members of <see cref="File"/>.</summary>
public static partial class SpindleFile
{
    /// <summary>
    /// Opens a file and returns its handle, with the semantics of <see cref="File.OpenHandle"/> on Linux.
    /// The handle can be used with <see cref="SpindleRandomAccess"/> and with System.IO
    /// (<see cref="System.IO.RandomAccess"/>, <see cref="FileStream"/>).
    /// </summary>
    /// <param name="path">The path of the file, relative or absolute.</param>
    /// <param name="mode">Whether to create, open or truncate the file.</param>
    /// <param name="access">The access the handle has.</param>
    /// <param name="share">The access other handles may have, emulated with advisory <c>flock</c>.</param>
    /// <param name="options">Advanced options.</param>
    /// <param name="preallocationSize">
    /// The initial allocation size for a created or overwritten file, as a <c>fallocate(FALLOC_FL_KEEP_SIZE)</c> hint.
    /// </param>
    /// <returns>An open handle that the caller disposes.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty or contains a NUL character, or the arguments contradict each other.</exception>
    /// <exception cref="ArgumentOutOfRangeException">An enum argument is out of range, or <paramref name="preallocationSize"/> is negative.</exception>
    /// <exception cref="FileNotFoundException">The file does not exist and the mode does not create it.</exception>
    /// <exception cref="DirectoryNotFoundException">A directory of the path does not exist.</exception>
    /// <exception cref="UnauthorizedAccessException">Access is denied, or the path is a directory.</exception>
    /// <exception cref="PathTooLongException">The path or a component of it is too long.</exception>
    /// <exception cref="IOException">Any other error, for example a sharing violation or a full disk; <see cref="Exception.HResult"/> is the errno.</exception>
    public static SafeFileHandle OpenHandle(string path, FileMode mode = FileMode.Open, FileAccess access = FileAccess.Read,
        FileShare share = FileShare.Read, FileOptions options = FileOptions.None, long preallocationSize = 0)
        => Portable.PassThrough.Enabled
            ? File.OpenHandle(path, mode, access, share, options, preallocationSize)
            : FileOpener.Open(path, mode, access, share, options, preallocationSize, unixCreateMode: null,
            SpindleOpenFlags.For(options));

    /// <summary>
    /// Opens a file with the mode, access, share, options, preallocation and create mode of <paramref name="options"/>.
    /// <see cref="SpindleFileOptions.BufferSize"/> does not apply to a handle.
    /// </summary>
    /// <param name="path">The path of the file, relative or absolute.</param>
    /// <param name="options">How to open the file.</param>
    /// <returns>An open handle that the caller disposes.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> or <paramref name="options"/> is null.</exception>
    /// <exception cref="ArgumentException">The options contradict each other.</exception>
    /// <exception cref="IOException">The file could not be opened; see <see cref="OpenHandle(string, FileMode, FileAccess, FileShare, FileOptions, long)"/>.</exception>
    public static SafeFileHandle OpenHandle(string path, SpindleFileOptions options)
    {
        if (Portable.PassThrough.Enabled)
        {
            return Portable.PassThroughFile.OpenHandle(path, options);
        }
        return OptionsOpen.Open(path, options, out _);
    }
}
