using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Interop;

namespace Spindle.Direct;

/// <summary>
/// The part of opening a file that concerns O_DIRECT, called from the open (<c>Handles/FileOpener</c>) around its
/// <c>open(2)</c>: a file system that refuses O_DIRECT (EINVAL at open) gives a clear
/// <see cref="IOException"/>, or a buffered handle when the caller allowed the fallback; a direct handle
/// is registered with its alignment so that every later call is checked. It uses nothing of the rest of the
/// open, only system calls, so that <c>Direct</c> does not depend on <c>Handles</c>.
/// </summary>
internal readonly unsafe struct DirectOpen
{
    /// <summary>
    /// Spindle's own open flag, never passed to open(2) (<see cref="Begin"/> removes it): a file system that
    /// refuses O_DIRECT may open the file buffered instead. No open(2) flag uses this bit.
    /// </summary>
    internal const int FallbackFlag = 0x40000000;

    private readonly bool _direct;        // O_DIRECT was asked for
    private readonly bool _fallback;      // a refusal may open the file buffered instead
    private readonly bool _wasMissing;    // the path did not exist before the open, which may create it

    private DirectOpen(bool direct, bool fallback, bool wasMissing)
    {
        _direct = direct;
        _fallback = fallback;
        _wasMissing = wasMissing;
    }

    /// <summary>Strips Spindle's own marker bits from <paramref name="flags"/> and notes what a refusal must undo.</summary>
    internal static DirectOpen Begin(string fullPath, ref int flags)
    {
        bool fallback = (flags & FallbackFlag) != 0;
        flags &= ~FallbackFlag;
        if ((flags & OpenFlags.O_DIRECT) == 0)
        {
            return default;
        }
        StatxBuffer status;
        bool wasMissing = (flags & OpenFlags.O_CREAT) != 0 &&
            Libc.Statx(LinuxConstants.AT_FDCWD, fullPath, 0, LinuxConstants.STATX_TYPE, &status) != 0 && Errno.Last == Errno.ENOENT;
        return new DirectOpen(direct: true, fallback, wasMissing);
    }

    /// <summary>
    /// Given the result of <c>open(2)</c> (a descriptor, or a negated errno): unchanged unless O_DIRECT was refused;
    /// then either a clear exception, or the result of a buffered open (with O_DIRECT removed from <paramref name="flags"/>).
    /// </summary>
    internal int Complete(int result, string fullPath, ref int flags, int permissions)
    {
        if (!_direct || result != -Errno.EINVAL)
        {
            return result;
        }
        // The refused open may have created the file before the file system said no: remove it again,
        // but only if it is still the empty file that open made.
        if (_wasMissing)
        {
            StatxBuffer status;
            if (Libc.Statx(LinuxConstants.AT_FDCWD, fullPath, 0, LinuxConstants.STATX_SIZE | LinuxConstants.STATX_TYPE, &status) == 0 &&
                status.Size == 0 && (status.Mode & LinuxConstants.S_IFMT) == LinuxConstants.S_IFREG)
            {
                Libc.Unlink(fullPath);
            }
        }
        if (!_fallback)
        {
            throw new IOException(
                $"The file system of '{fullPath}' does not support unbuffered I/O (O_DIRECT). Open the file without direct I/O, " +
                $"or set {nameof(SpindleFileOptions)}.{nameof(SpindleFileOptions.DirectIOFallback)} to accept buffered I/O there.", Errno.EINVAL);
        }
        flags &= ~OpenFlags.O_DIRECT;
        result = Libc.OpenRetryingInterrupts(fullPath, flags, permissions);
        if (result >= 0)
        {
            SpindleMetrics.Fallback();
        }
        return result;
    }

    /// <summary>Registers a handle that was opened with O_DIRECT, with the alignment its file needs.</summary>
    internal static void Opened(SafeFileHandle handle, int flags)
    {
        if ((flags & OpenFlags.O_DIRECT) != 0)
        {
            DirectHandles.Register(handle, AlignmentProbe.For(handle, null));
        }
    }
}
