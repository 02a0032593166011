using Microsoft.Win32.SafeHandles;
using Spindle.Handles;
using Spindle.Interop;
using Spindle.Direct;
using Spindle.Syscalls;

namespace Spindle.Streams;

/// <summary>
/// Chooses Spindle's own buffering layer for a stream whose handle does direct I/O or atomic appends,
/// where the ordinary buffer would send misaligned I/O to the kernel or split records.
/// </summary>
internal static class StreamLayers
{
    /// <summary>
    /// Returns the layer to use over <paramref name="os"/>, and sets <paramref name="bufferSize"/> to 0 when that
    /// layer does its own buffering (so that no ordinary buffer is stacked on it).
    /// </summary>
    internal static FileStreamStrategy Stack(FileStreamStrategy os, ref int bufferSize)
    {
        if (!os.CanSeek)
        {
            return os;
        }
        SafeFileHandle handle = os.SafeFileHandle;
        int flags = Libc.Fcntl(handle, LinuxConstants.F_GETFL, 0);
        if (flags < 0)
        {
            throw IoErrors.ForErrno(Errno.Last, SafeFileHandleInternals.GetPath(handle));
        }
        if ((flags & OpenFlags.O_DIRECT) != 0)
        {
            // A handle opened elsewhere with O_DIRECT is not in the registry: probe its file now.
            DirectIOAlignment alignment = DirectHandles.TryGet(handle, out DirectIOAlignment known)
                ? known
                : AlignmentProbe.For(handle, SafeFileHandleInternals.GetPath(handle));
            var layer = new DirectFileStreamStrategy((OSFileStreamStrategy)os, handle, alignment, bufferSize);
            bufferSize = 0;
            return layer;
        }
        if ((flags & OpenFlags.O_APPEND) != 0)
        {
            var layer = new AtomicAppendFileStreamStrategy((OSFileStreamStrategy)os, handle, bufferSize);
            bufferSize = 0;
            return layer;
        }
        return os;
    }
}
