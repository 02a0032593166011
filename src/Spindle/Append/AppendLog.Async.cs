using System.Buffers;
using System.Runtime.CompilerServices;
using System.Runtime.Versioning;
using Microsoft.Win32.SafeHandles;

namespace Spindle;

public static partial class AppendLog
{
    /// <summary>
    /// Appends <paramref name="payload"/> as one frame, with one write, asynchronously on the process-wide engine,
    /// to a handle opened with <see cref="SpindleFileOptions.AtomicAppend"/>: what
    /// <see cref="Append(SafeFileHandle, ReadOnlySpan{byte})"/> does, without blocking the caller. The frame is in
    /// the file (the page cache) when the task completes; for a record that is on the device when the task
    /// completes, use <see cref="AppendLogWriter.AppendDurableAsync"/>.
    /// </summary>
    /// <param name="handle">A handle opened with <see cref="SpindleFileOptions.AtomicAppend"/>.</param>
    /// <param name="payload">The record; it must stay unchanged until the task completes.</param>
    /// <param name="cancellationToken">Cancels the write before it starts.</param>
    /// <returns>A task that completes when the frame is written.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="handle"/> is null.</exception>
    /// <exception cref="ArgumentException">The handle is invalid or was not opened for appending (<c>O_APPEND</c>), or the payload is too long.</exception>
    /// <exception cref="ObjectDisposedException">The handle is closed.</exception>
    /// <exception cref="IOException">The write failed (the errno is the HResult).</exception>
    /// <exception cref="PlatformNotSupportedException">Not on Linux (atomic append is Linux only).</exception>
    [SupportedOSPlatform("linux")]
    public static ValueTask AppendAsync(SafeFileHandle handle, ReadOnlyMemory<byte> payload, CancellationToken cancellationToken = default)
    {
        ValidateAppendHandle(handle);
        if (payload.Length > MaxPayloadLength)
        {
            throw new ArgumentException($"A record holds at most {MaxPayloadLength} bytes.", nameof(payload));
        }
        if (cancellationToken.IsCancellationRequested)
        {
            return ValueTask.FromCanceled(cancellationToken);
        }
        byte[] frame = ArrayPool<byte>.Shared.Rent(GetMaxFrameLength(payload.Length));
        int length = WriteFrame(payload.Span, frame);
        ValueTask write;
        try
        {
            // With O_APPEND the kernel places the write at the end whatever the offset says.
            write = SpindleRandomAccess.WriteAsync(handle, frame.AsMemory(0, length), 0, cancellationToken);
        }
        catch
        {
            ArrayPool<byte>.Shared.Return(frame);
            throw;
        }
        if (write.IsCompleted)
        {
            ArrayPool<byte>.Shared.Return(frame);
            return write;
        }
        return AwaitThenReturn(write, frame);
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private static async ValueTask AwaitThenReturn(ValueTask write, byte[] frame)
    {
        try
        {
            await write.ConfigureAwait(false);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(frame);
        }
    }

    /// <summary>The checks of <see cref="Append(SafeFileHandle, ReadOnlySpan{byte})"/>: a valid, open, Linux, <c>O_APPEND</c> handle.</summary>
    internal static void ValidateAppendHandle(SafeFileHandle handle)
    {
        ArgumentNullException.ThrowIfNull(handle);
        if (handle.IsInvalid)
        {
            throw new ArgumentException("Invalid handle.", nameof(handle));
        }
        ObjectDisposedException.ThrowIf(handle.IsClosed, handle);
        if (Portable.PassThrough.Enabled)
        {
            throw Portable.PassThrough.LinuxOnly("Appending a frame to a handle (O_APPEND)");
        }
        if (!IsAppendHandle(handle))
        {
            throw new ArgumentException("The handle must be opened with SpindleFileOptions.AtomicAppend (O_APPEND): elsewhere a frame could overwrite others.", nameof(handle));
        }
    }
}
