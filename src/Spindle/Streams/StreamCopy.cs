using Microsoft.Win32.SafeHandles;
using Spindle.Copy;
using Spindle.Direct;
using Spindle.Handles;
using Spindle.Interop;
using Spindle.Syscalls;

namespace Spindle.Streams;

/// <summary>
/// <see cref="SpindleFileStream.CopyTo(Stream, int)"/> from one regular file into another file stream
/// (Spindle's or System.IO's) inside the kernel: the rest of the source from its position is copied with
/// <c>copy_file_range</c> to the destination's position (preallocated first), and both positions move
/// past the copied bytes, as a read/write loop would leave them. Anything else takes the ordinary loop.
/// </summary>
internal static class StreamCopy
{
    /// <summary>Whether the kernel can do this copy; the caller uses the ordinary loop otherwise.</summary>
    internal static bool CanCopy(FileStreamStrategy source, Stream destination)
    {
        if (source.IsDerived || !source.CanRead || !source.CanSeek || source is DirectFileStreamStrategy or AtomicAppendFileStreamStrategy)
        {
            return false;
        }
        // Exact types only: a derived stream's overrides must see the data.
        Type type = destination.GetType();
        return (type == typeof(SpindleFileStream) || type == typeof(FileStream)) && destination.CanWrite && destination.CanSeek;
    }

    /// <summary>Copies; call only when <see cref="CanCopy"/> said yes.</summary>
    internal static void Copy(FileStreamStrategy source, Stream destination, CancellationToken cancellationToken)
    {
        // What the source read ahead goes first, as FileStream's CopyTo writes it: the file may have changed since
        // (another handle may have truncated it), and those bytes are what this stream has read.
        if (source is BufferedFileStreamStrategy buffered)
        {
            buffered.WriteReadAheadTo(destination);
        }
        SafeFileHandle output = destination is SpindleFileStream spindle ? spindle.SafeFileHandle : ((FileStream)destination).SafeFileHandle;
        SafeFileHandle input = source.SafeFileHandle;
        // Direct or append-only destinations need their own layer's rules; copy_file_range knows neither.
        int flags = Libc.Fcntl(output, LinuxConstants.F_GETFL, 0);
        if (flags < 0 || (flags & (OpenFlags.O_APPEND | OpenFlags.O_DIRECT)) != 0 || !SafeFileHandleInternals.CanSeek(output))
        {
            CopyWithLoop(source, destination, cancellationToken);
            return;
        }

        if (!TryGetRegularFileLength(input, out long length))
        {
            CopyWithLoop(source, destination, cancellationToken); // a block device reports no length
            return;
        }
        long inOffset = source.Position;
        long count = length - inOffset;
        if (count <= 0)
        {
            return;
        }
        long outOffset = destination.Position;
        // A hint: space for the copy is reserved up front where the file system can and it helps.
        if (ExtentCopier.WorthPreallocating(output))
        {
            Libc.FAllocate(output, LinuxConstants.FALLOC_FL_KEEP_SIZE, outOffset, count);
        }

        long copied = ExtentCopier.CopyBytes(input, inOffset, output, outOffset, count,
            SafeFileHandleInternals.GetPath(input), SafeFileHandleInternals.GetPath(output), cancellationToken);
        source.Position = inOffset + copied;
        destination.Position = outOffset + copied;
    }

    private static unsafe bool TryGetRegularFileLength(SafeFileHandle handle, out long length)
    {
        StatxBuffer status;
        if (Libc.Statx(handle, string.Empty, LinuxConstants.AT_EMPTY_PATH, LinuxConstants.STATX_TYPE | LinuxConstants.STATX_SIZE, &status) != 0)
        {
            throw IoErrors.ForErrno(Errno.Last, SafeFileHandleInternals.GetPath(handle));
        }
        length = (long)status.Size;
        return (status.Mode & LinuxConstants.S_IFMT) == LinuxConstants.S_IFREG;
    }

    private static void CopyWithLoop(FileStreamStrategy source, Stream destination, CancellationToken cancellationToken)
    {
        byte[] buffer = new byte[1 << 20];
        int read;
        while ((read = source.Read(buffer)) > 0)
        {
            cancellationToken.ThrowIfCancellationRequested();
            destination.Write(buffer, 0, read);
        }
    }
}
