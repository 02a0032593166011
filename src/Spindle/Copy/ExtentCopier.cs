using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Handles;
using Spindle.Interop;

namespace Spindle.Copy;

/// <summary>
/// Moves the bytes of a copy: walks the source's data extents (<c>SEEK_DATA</c>/<c>SEEK_HOLE</c>) so
/// that holes stay holes, preallocates each extent in the destination, and copies it with
/// <c>copy_file_range</c>, or with <c>pread</c>/<c>pwrite</c> through a large buffer once the kernel
/// refuses. The destination's length is set last, which also recreates a trailing hole. A whole-file copy
/// into an empty destination is first offered to the file system as a clone (<see cref="TryClone"/>).
/// </summary>
internal static unsafe class ExtentCopier
{
    private const int SEEK_DATA = 3;
    private const int SEEK_HOLE = 4;

    // Large enough that system calls cost nothing next to the data, small enough to cancel and report promptly.
    private const long KernelChunk = 64L << 20;
    private const int BufferChunk = 1 << 20;

    internal static void Copy(SafeFileHandle inFd, SafeFileHandle outFd, long length, string source, string destination,
        IProgress<long>? progress, CancellationToken cancellationToken)
    {
        var state = new CopyState(inFd, outFd, outDelta: 0, source, destination, progress, cancellationToken);
        try
        {
            if (length == 0)
            {
                // Some files (procfs, sysfs) report 0 bytes and still have content: read until the end.
                state.CopyWithBuffer(0, long.MaxValue);
            }
            else
            {
                CopyExtents(ref state, length);
            }
            SetLength(outFd, state.End, destination);
        }
        finally
        {
            state.Dispose();
        }
    }

    /// <summary>
    /// Copies what <paramref name="inFd"/> reads until its end into <paramref name="outFd"/> with read/write at
    /// their current positions, as System.IO does for a pipe, a FIFO or a device: no offsets, extents or length.
    /// </summary>
    internal static void CopySequential(SafeFileHandle inFd, SafeFileHandle outFd, string source, string destination, IProgress<long>? progress,
        CancellationToken cancellationToken)
    {
        var state = new CopyState(inFd, outFd, outDelta: 0, source, destination, progress, cancellationToken);
        try
        {
            state.CopyWithBuffer(0, long.MaxValue, sequential: true);
        }
        finally
        {
            state.Dispose();
        }
    }

    /// <summary>
    /// Copies <paramref name="count"/> bytes from one offset of one file to an offset of another (holes
    /// included, since the destination range may hold data); returns how many bytes were copied, fewer
    /// when the source ends first. The destination's length is not changed beyond what is written.
    /// </summary>
    internal static long CopyBytes(SafeFileHandle inFd, long inOffset, SafeFileHandle outFd, long outOffset, long count, string? source, string? destination,
        CancellationToken cancellationToken)
    {
        var state = new CopyState(inFd, outFd, outOffset - inOffset, source, destination, progress: null, cancellationToken);
        try
        {
            state.Advance(inOffset);
            state.CopyRange(inOffset, inOffset + count);
            return state.End - inOffset;
        }
        finally
        {
            state.Dispose();
        }
    }

    /// <summary>
    /// Makes the empty <paramref name="outFd"/> share all of <paramref name="inFd"/>'s extents (<c>FICLONE</c>), as
    /// System.IO's <c>File.Copy</c> tries first: where the file system can (btrfs, xfs with reflink, bcachefs, NFS 4.2)
    /// nothing is copied, holes stay holes and no free space is needed. False elsewhere (EOPNOTSUPP, EXDEV, EINVAL).
    /// </summary>
    internal static bool TryClone(SafeFileHandle inFd, SafeFileHandle outFd) => Libc.IoctlValue(outFd, LinuxConstants.FICLONE, inFd) == 0;

    private static void CopyExtents(ref CopyState state, long length)
    {
        bool preallocate = WorthPreallocating(state.OutFd);
        long position = 0;
        while (position < length)
        {
            long dataStart = Libc.LSeek(state.InFd, position, SEEK_DATA);
            if (dataStart < 0)
            {
                int errno = Errno.Last;
                if (errno == Errno.ENXIO)
                {
                    // Only a hole remains; the final length recreates it.
                    state.Advance(length);
                    return;
                }
                // No extent map here (EINVAL and the like): everything is data.
                dataStart = position;
            }
            long dataEnd = Libc.LSeek(state.InFd, dataStart, SEEK_HOLE);
            if (dataEnd < 0 || dataEnd > length)
            {
                dataEnd = length;
            }
            state.Advance(dataStart);
            if (preallocate)
            {
                Preallocate(state.OutFd, dataStart, dataEnd - dataStart, state.Destination);
            }
            if (!state.CopyRange(dataStart, dataEnd))
            {
                return; // The source ended early: it was truncated while we copied.
            }
            position = dataEnd;
        }
    }

    /// <summary>
    /// Whether reserving a copy's space in <paramref name="outFd"/> before the copy helps: not on tmpfs and ramfs, where
    /// a preallocation allocates and zeroes the pages the copy then writes again.
    /// </summary>
    internal static bool WorthPreallocating(SafeFileHandle outFd) => LocalFileSystems.Ask(outFd, readable: false) != FileSystemKind.Memory;

    private static void Preallocate(SafeFileHandle outFd, long offset, long count, string? destination)
    {
        if (count <= 0 || Libc.FAllocate(outFd, LinuxConstants.FALLOC_FL_KEEP_SIZE, offset, count) == 0)
        {
            return;
        }
        // A hint: only "the data cannot fit" is worth failing for, before anything is written.
        int errno = Errno.Last;
        if (errno is Errno.ENOSPC or Errno.EFBIG or Errno.EDQUOT)
        {
            throw IoErrors.ForErrno(errno, destination);
        }
    }

    private static void SetLength(SafeFileHandle outFd, long length, string destination)
    {
        int result;
        while ((result = Libc.FTruncate(outFd, length)) < 0 && Errno.Last == Errno.EINTR)
        {
        }
        if (result < 0)
        {
            throw IoErrors.ForErrno(Errno.Last, destination);
        }
    }

    /// <summary>The moving parts of one copy: descriptors, how far it got, and the fallback buffer once needed.</summary>
    private struct CopyState : IDisposable
    {
        internal readonly SafeFileHandle InFd;
        internal readonly SafeFileHandle OutFd;
        internal readonly string? Destination;
        private readonly long _outDelta;   // destination offset minus source offset
        private readonly string? _source;
        private readonly IProgress<long>? _progress;
        private readonly CancellationToken _cancellationToken;
        private bool _kernelRefused; // copy_file_range failed once; the buffer loop does the rest
        private byte* _buffer;       // the fallback buffer, allocated on first use

        internal CopyState(SafeFileHandle inFd, SafeFileHandle outFd, long outDelta, string? source, string? destination, IProgress<long>? progress,
            CancellationToken cancellationToken)
        {
            InFd = inFd;
            OutFd = outFd;
            _outDelta = outDelta;
            _source = source;
            Destination = destination;
            _progress = progress;
            _cancellationToken = cancellationToken;
        }

        /// <summary>How far the copy got: the destination's final length.</summary>
        internal long End { get; private set; }

        internal void Advance(long position)
        {
            if (position > End)
            {
                End = position;
                _progress?.Report(position);
            }
        }

        /// <summary>Copies [start, end); false when the source ended before <paramref name="end"/>.</summary>
        internal bool CopyRange(long start, long end)
        {
            long offset = start;
            while (!_kernelRefused && offset < end)
            {
                _cancellationToken.ThrowIfCancellationRequested();
                long inOffset = offset;
                long outOffset = offset + _outDelta;
                nint copied = Libc.CopyFileRange(InFd, &inOffset, OutFd, &outOffset, (nuint)Math.Min(end - offset, KernelChunk), 0);
                if (copied > 0)
                {
                    offset += copied;
                    SpindleMetrics.Operation(IoEngine.Sync, IoDirection.Write, copied, IoMechanism.Inline);
                    Advance(offset);
                    continue;
                }
                if (copied < 0)
                {
                    int errno = Errno.Last;
                    if (errno == Errno.EINTR)
                    {
                        continue;
                    }
                    if (errno is not (Errno.EXDEV or Errno.EINVAL or Errno.ENOSYS or Errno.EOPNOTSUPP or Errno.EBADF or Errno.EPERM))
                    {
                        throw IoErrors.ForErrno(errno, Destination);
                    }
                }
                // Refused, or 0 before the end (some pseudo file systems say 0 instead of refusing): the
                // buffer loop decides whether this is really the end of the file.
                _kernelRefused = true;
                SpindleMetrics.Fallback();
            }
            return offset >= end || CopyWithBuffer(offset, end);
        }

        /// <summary>Copies [start, end) with pread/pwrite (read/write when <paramref name="sequential"/>); false when the source ended first.</summary>
        internal bool CopyWithBuffer(long start, long end, bool sequential = false)
        {
            if (_buffer == null)
            {
                _buffer = (byte*)NativeMemory.AlignedAlloc(BufferChunk, 4096);
            }
            long offset = start;
            while (offset < end)
            {
                _cancellationToken.ThrowIfCancellationRequested();
                nuint count = (nuint)Math.Min(end - offset, BufferChunk);
                nint read = sequential ? Libc.Read(InFd, _buffer, count) : Libc.PRead(InFd, _buffer, count, offset);
                if (read < 0)
                {
                    if (Errno.Last == Errno.EINTR)
                    {
                        continue;
                    }
                    throw IoErrors.ForErrno(Errno.Last, _source);
                }
                if (read == 0)
                {
                    return false;
                }
                SpindleMetrics.Operation(IoEngine.Sync, IoDirection.Read, read, IoMechanism.Inline);
                WriteAll(_buffer, read, sequential ? -1 : offset + _outDelta);
                offset += read;
                Advance(offset);
            }
            return true;
        }

        // At offset, or at the descriptor's position when offset is -1.
        private readonly void WriteAll(byte* data, nint count, long offset)
        {
            while (count > 0)
            {
                nint written = offset < 0 ? Libc.Write(OutFd, data, (nuint)count) : Libc.PWrite(OutFd, data, (nuint)count, offset);
                if (written < 0)
                {
                    if (Errno.Last == Errno.EINTR)
                    {
                        continue;
                    }
                    throw IoErrors.ForErrno(Errno.Last, Destination);
                }
                SpindleMetrics.Operation(IoEngine.Sync, IoDirection.Write, written, IoMechanism.Inline);
                data += written;
                count -= written;
                offset = offset < 0 ? offset : offset + written;
            }
        }

        public void Dispose()
        {
            NativeMemory.AlignedFree(_buffer);
            _buffer = null;
        }
    }
}
