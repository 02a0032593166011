using Microsoft.Win32.SafeHandles;
using Spindle.Copy;
using Spindle.Handles;
using Spindle.Interop;

namespace Spindle;

public static partial class SpindleFile
{
    /// <summary>
    /// Copies a file with the semantics of <see cref="File.Copy(string, string, bool)"/> on Linux, but
    /// inside the kernel: <c>copy_file_range</c> in large chunks (a read/write loop with a large buffer
    /// where the kernel refuses), the destination preallocated, and the holes of a sparse source kept
    /// as holes. The destination gets the source's permission bits and access and modification times.
    /// </summary>
    /// <param name="sourceFileName">The file to copy.</param>
    /// <param name="destFileName">The new file; it must not be a directory.</param>
    /// <param name="overwrite">Whether an existing destination file is replaced.</param>
    /// <exception cref="ArgumentNullException">A path is null.</exception>
    /// <exception cref="ArgumentException">A path is empty or contains a NUL character.</exception>
    /// <exception cref="FileNotFoundException">The source does not exist.</exception>
    /// <exception cref="DirectoryNotFoundException">A directory of a path does not exist.</exception>
    /// <exception cref="UnauthorizedAccessException">Access is denied, or the source is a directory, or the destination is a directory and <paramref name="overwrite"/> is true.</exception>
    /// <exception cref="IOException">
    /// The destination exists and <paramref name="overwrite"/> is false, the destination is a directory,
    /// the source and destination are the same file, the disk is full, another handle holds a lock on the source or
    /// the destination, or another I/O error occurred.
    /// </exception>
    /// <remarks>
    /// As <see cref="File.Copy(string, string, bool)"/>, the copy takes System.IO's advisory locks (<c>flock</c>): shared
    /// on the source, exclusive on the destination. A FIFO destination is locked too, so a reader that opened it by its
    /// path through <see cref="FileStream"/> or <see cref="File"/> (which take a shared lock once their open returns)
    /// races the copy for the lock; whichever comes second fails with a sharing violation, on both libraries. A reader
    /// that must not race opens the FIFO without a lock, or the process turns locking off with System.IO's switch.
    /// </remarks>
    public static void Copy(string sourceFileName, string destFileName, bool overwrite = false)
    {
        ArgumentException.ThrowIfNullOrEmpty(sourceFileName);
        ArgumentException.ThrowIfNullOrEmpty(destFileName);
        if (Portable.PassThrough.Enabled)
        {
            File.Copy(sourceFileName, destFileName, overwrite);
            return;
        }
        FileCopier.Copy(Path.GetFullPath(sourceFileName), Path.GetFullPath(destFileName), overwrite, progress: null, CancellationToken.None);
    }

    /// <summary>
    /// Copies a file as <see cref="Copy(string, string, bool)"/> does, on the thread pool, reporting progress
    /// and stopping between chunks when cancelled.
    /// </summary>
    /// <param name="sourceFileName">The file to copy.</param>
    /// <param name="destFileName">The new file; it must not be a directory.</param>
    /// <param name="overwrite">Whether an existing destination file is replaced.</param>
    /// <param name="progress">
    /// Receives the number of source bytes dealt with so far (holes of a sparse file included), ending
    /// with the file's length; null for none.
    /// </param>
    /// <param name="cancellationToken">
    /// Cancels the copy between two chunks; a cancelled copy deletes the partial destination it wrote.
    /// </param>
    /// <returns>A task that completes when the destination is complete.</returns>
    /// <exception cref="ArgumentNullException">A path is null.</exception>
    /// <exception cref="ArgumentException">A path is empty or contains a NUL character.</exception>
    /// <exception cref="OperationCanceledException">The copy was cancelled (through the task).</exception>
    /// <exception cref="IOException">See <see cref="Copy(string, string, bool)"/> (through the task).</exception>
    public static Task CopyAsync(string sourceFileName, string destFileName, bool overwrite = false,
        IProgress<long>? progress = null, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(sourceFileName);
        ArgumentException.ThrowIfNullOrEmpty(destFileName);
        if (cancellationToken.IsCancellationRequested)
        {
            return Task.FromCanceled(cancellationToken);
        }
        string source = Path.GetFullPath(sourceFileName);
        string destination = Path.GetFullPath(destFileName);
        if (Portable.PassThrough.Enabled)
        {
            return Portable.PassThroughFile.CopyAsync(source, destination, overwrite, progress, cancellationToken);
        }
        // copy_file_range blocks; a pool thread runs it so that the caller's thread never does.
        return Task.Run(() => FileCopier.Copy(source, destination, overwrite, progress, cancellationToken), cancellationToken);
    }
}
