using Microsoft.Win32.SafeHandles;
using Spindle.Engines;
using Spindle.Handles;
using Spindle.Interop;
using Spindle.Syscalls;

namespace Spindle.Streams;

/// <summary>Chooses and stacks the strategies of a stream: OS layer, buffer, derived-type routing.</summary>
internal static class StrategyFactory
{
    // openFlags: the Spindle open flags the handle was requested with (SpindleOpenFlags); without O_DIRECT or
    // O_APPEND the handle has neither, so the stream needs no probe of the descriptor's flags.
    // opened: what the open learned about the file, for the engines' facts at the first asynchronous operation.
    internal static FileStreamStrategy ForOpenedFile(SpindleFileStream stream, SafeFileHandle handle, FileMode mode, FileAccess access,
        int bufferSize, bool isAsync, IoEngine requested, int openFlags, in OpenedFile opened)
    {
        try
        {
            bool canSeek = SafeFileHandleInternals.CanSeek(handle);
            FileIoEngine engine = ChooseEngine(requested, isAsync);
            OSFileStreamStrategy os;
            if (canSeek)
            {
                // Append starts at the end and protects what was there.
                long appendStart = mode == FileMode.Append ? HandleIo.GetLength(handle) : -1;
                os = new SeekableFileStreamStrategy(handle, access, isAsync, engine, Math.Max(appendStart, 0), appendStart, opened);
            }
            else
            {
                os = new UnseekableFileStreamStrategy(handle, access, isAsync, engine, opened);
            }
            return Stack(stream, os, bufferSize, (openFlags & (OpenFlags.O_DIRECT | OpenFlags.O_APPEND)) != 0);
        }
        catch
        {
            handle.Dispose();
            throw;
        }
    }

    internal static FileStreamStrategy ForHandle(SpindleFileStream stream, SafeFileHandle handle, FileAccess access, int bufferSize, bool isAsync)
    {
        if (Portable.PassThrough.Enabled)
        {
            return PassThroughFileStreamStrategy.Wrap(stream, handle, access, bufferSize, isAsync);
        }
        FileIoEngine engine = ChooseEngine(IoEngine.Auto, isAsync);
        OSFileStreamStrategy os;
        if (SafeFileHandleInternals.CanSeek(handle))
        {
            // A handle from elsewhere: its current OS offset becomes the stream's position.
            long position = Libc.LSeek(handle, 0, LinuxConstants.SEEK_CUR);
            if (position < 0)
            {
                throw IoErrors.ForErrno(Errno.Last, SafeFileHandleInternals.GetPath(handle));
            }
            os = new SeekableFileStreamStrategy(handle, access, isAsync, engine, position, appendStart: -1, OpenedFile.Unknown);
        }
        else
        {
            os = new UnseekableFileStreamStrategy(handle, access, isAsync, engine, OpenedFile.Unknown);
        }
        // A handle from elsewhere may have been opened with any flags.
        return Stack(stream, os, bufferSize, mayHaveOwnLayer: true);
    }

    /// <summary>
    /// An engine named in the options wins; otherwise asynchronous handles get the process default, and
    /// synchronous ones run *Async calls on the thread pool, as System.IO does on Unix.
    /// </summary>
    private static FileIoEngine ChooseEngine(IoEngine requested, bool isAsync)
    {
        if (requested != IoEngine.Auto)
        {
            return EngineSelector.Get(requested);
        }
        return isAsync ? EngineSelector.Default : EngineSelector.Get(IoEngine.ThreadPool);
    }

    private static FileStreamStrategy Stack(SpindleFileStream stream, FileStreamStrategy strategy, int bufferSize, bool mayHaveOwnLayer)
    {
        if (mayHaveOwnLayer)
        {
            // O_DIRECT or O_APPEND: Spindle's own buffering layer. Asking costs an fcntl and an lseek, which
            // System.IO does not make, so streams opened without either flag skip it.
            strategy = StreamLayers.Stack(strategy, ref bufferSize);
        }
        // 0 and 1 both disable buffering, as in System.IO.
        if (bufferSize > 1)
        {
            // Spindle's own layers (O_DIRECT, O_APPEND) buffer themselves and set bufferSize to 0, so a
            // buffer is only ever stacked on the OS layer.
            strategy = new BufferedFileStreamStrategy((OSFileStreamStrategy)strategy, bufferSize);
        }
        return stream.GetType() == typeof(SpindleFileStream) ? strategy : new DerivedFileStreamStrategy(stream, strategy);
    }
}
