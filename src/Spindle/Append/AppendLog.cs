using System.Buffers;
using System.Runtime.InteropServices;
using System.Runtime.Versioning;
using Microsoft.Win32.SafeHandles;
using Spindle.Append;
using Spindle.Interop;
using Spindle.Syscalls;

namespace Spindle;

/// <summary>
/// Length and checksum framing for records that several writers append to one file with
/// <see cref="SpindleFileOptions.AtomicAppend"/>, and the recovery scan that reads them back.
/// </summary>
/// <remarks>
/// <para>With <c>O_APPEND</c>, Linux places each <c>write(2)</c> to a regular file at the end of the file
/// whole, holding the file's lock for the whole copy (ext4, xfs, btrfs, tmpfs): writers in any number of
/// processes never interleave inside one call. What the kernel does not promise is that a call finishes: a
/// writer killed with SIGKILL in the middle of a large write, or one that meets a full disk, leaves the part
/// already copied, and later writers' records follow it. A crash (power loss) can likewise leave the last
/// records partly on disk. Framing makes such a torn record detectable.</para>
/// <para>A frame is a zero byte, then the payload's length (4 bytes, little-endian), a CRC-32C of length and
/// payload (4 bytes) and the payload, encoded with COBS (Consistent Overhead Byte Stuffing: at most one byte
/// more per 254) so that no other zero byte occurs in it. <see cref="Append(SafeFileHandle, ReadOnlySpan{byte})"/>
/// writes a frame with one <c>write(2)</c>. <see cref="Scan"/> and <see cref="AppendLogReader"/> split the log
/// at zero bytes: each piece is a whole frame or damage, so one torn record costs only itself, a frame that a
/// torn record's payload holds is never taken for a record, and each byte is looked at once.</para>
/// </remarks>
public static partial class AppendLog
{
    // The frame format's limit, a constant for the codec; callers read the property.
    internal const int MaxPayload = 1 << 30;

    /// <summary>The largest payload a frame holds (1 GiB); a header claiming more is damage.</summary>
    public static int MaxPayloadLength => MaxPayload;

    // Frames up to this size are built on the stack.
    private const int StackFrameLimit = 1024;

    /// <summary>The most bytes the frame of a payload of <paramref name="payloadLength"/> bytes takes (its length depends on the zero bytes in the payload).</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="payloadLength"/> is negative or above <see cref="MaxPayloadLength"/>.</exception>
    public static int GetMaxFrameLength(int payloadLength)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(payloadLength);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(payloadLength, MaxPayloadLength);
        return FrameCodec.MaxFrameLength(payloadLength);
    }

    /// <summary>Writes the frame of <paramref name="payload"/> into <paramref name="destination"/> and returns its length.</summary>
    /// <exception cref="ArgumentException"><paramref name="payload"/> is longer than <see cref="MaxPayloadLength"/>, or <paramref name="destination"/> is shorter than <see cref="GetMaxFrameLength"/>.</exception>
    public static int WriteFrame(ReadOnlySpan<byte> payload, Span<byte> destination)
    {
        if (payload.Length > MaxPayloadLength)
        {
            throw new ArgumentException($"A record holds at most {MaxPayloadLength} bytes.", nameof(payload));
        }
        int length = FrameCodec.MaxFrameLength(payload.Length);
        if (destination.Length < length)
        {
            throw new ArgumentException($"The frame of {payload.Length} bytes needs up to {length} bytes (GetMaxFrameLength).", nameof(destination));
        }
        return FrameCodec.Encode(payload, destination);
    }

    /// <summary>
    /// Appends <paramref name="payload"/> as one frame, with one <c>write(2)</c>, to a handle opened with
    /// <see cref="SpindleFileOptions.AtomicAppend"/>. The frame is whole in the file unless the writer dies in
    /// the middle of the call or the kernel writes only part of it (a full disk); then <see cref="Scan"/> skips it.
    /// </summary>
    /// <exception cref="ArgumentNullException"><paramref name="handle"/> is null.</exception>
    /// <exception cref="ArgumentException">The handle is invalid or was not opened for appending (<c>O_APPEND</c>), or the payload is too long.</exception>
    /// <exception cref="ObjectDisposedException">The handle is closed.</exception>
    /// <exception cref="UnauthorizedAccessException">The handle was opened for reading only (as System.IO.RandomAccess.Write reports it).</exception>
    /// <exception cref="IOException">The write failed (the errno is the HResult).</exception>
    /// <exception cref="PlatformNotSupportedException">Not on Linux (atomic append is Linux only).</exception>
    [SupportedOSPlatform("linux")]
    public static void Append(SafeFileHandle handle, ReadOnlySpan<byte> payload)
    {
        ValidateAppendHandle(handle);
        WithFrame(payload, handle, static (h, frame) => SpindleRandomAccess.Write(h, frame, 0));
    }

    /// <summary>
    /// Appends <paramref name="payload"/> as one frame with one <see cref="Stream.Write(ReadOnlySpan{byte})"/>.
    /// On a <see cref="SpindleFileStream"/> opened with <see cref="SpindleFileOptions.AtomicAppend"/>, that is
    /// one <c>write(2)</c> (at its next flush when the frame fits in the buffer, at once otherwise).
    /// </summary>
    /// <exception cref="ArgumentNullException"><paramref name="stream"/> is null.</exception>
    /// <exception cref="ArgumentException">The payload is too long.</exception>
    /// <exception cref="NotSupportedException">The stream cannot write.</exception>
    /// <exception cref="ObjectDisposedException">The stream is closed.</exception>
    public static void Append(Stream stream, ReadOnlySpan<byte> payload)
    {
        ArgumentNullException.ThrowIfNull(stream);
        WithFrame(payload, stream, static (s, frame) => s.Write(frame));
    }

    /// <summary>
    /// Reads framed records back: every whole record in file order, and the stretches that are not one
    /// (a torn record, an unfinished tail), which are skipped. To read a large log a record at a time, use
    /// <see cref="AppendLogReader"/>.
    /// </summary>
    public static AppendLogScan Scan(ReadOnlyMemory<byte> contents)
    {
        Stream stream = MemoryMarshal.TryGetArray(contents, out ArraySegment<byte> array)
            ? new MemoryStream(array.Array!, array.Offset, array.Count, writable: false)
            : new MemoryStream(contents.ToArray(), writable: false);
        return ScanAll(new AppendLogReader(stream), contents.Length);
    }

    /// <summary>Reads the file at <paramref name="path"/> and scans it (see <see cref="Scan"/>), a record at a time.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is null.</exception>
    /// <exception cref="IOException">The file cannot be read; the exceptions are <see cref="File.ReadAllBytes(string)"/>'s.</exception>
    public static AppendLogScan ReadAll(string path)
    {
        var reader = new AppendLogReader(path);
        return ScanAll(reader, reader.StreamLength);
    }

    // The records go into one array as long as the log (a payload is never longer than its frame), sliced.
    private static AppendLogScan ScanAll(AppendLogReader reader, long length)
    {
        using (reader)
        {
            var records = new List<ReadOnlyMemory<byte>>();
            byte[] payloads = new byte[Math.Min(length, Array.MaxLength)];
            int used = 0;
            while (reader.Read())
            {
                ReadOnlySpan<byte> record = reader.Record.Span;
                if (record.Length > payloads.Length - used)
                {
                    // The file grew while it was read: a new array for the rest.
                    payloads = new byte[Math.Max(record.Length, payloads.Length)];
                    used = 0;
                }
                record.CopyTo(payloads.AsSpan(used));
                records.Add(payloads.AsMemory(used, record.Length));
                used += record.Length;
            }
            return new AppendLogScan(records, new List<(long Offset, long Length)>(reader.Damaged));
        }
    }

    private static bool IsAppendHandle(SafeFileHandle handle)
    {
        int flags = Libc.Fcntl(handle, LinuxConstants.F_GETFL, 0);
        return flags >= 0 && (flags & OpenFlags.O_APPEND) != 0;
    }

    private delegate void FrameWriter<T>(T target, ReadOnlySpan<byte> frame);

    // Builds the frame on the stack or in a pooled array, so that appending allocates nothing.
    private static void WithFrame<T>(ReadOnlySpan<byte> payload, T target, FrameWriter<T> write)
    {
        int length = GetMaxFrameLength(payload.Length <= MaxPayloadLength ? payload.Length : throw new ArgumentException(
            $"A record holds at most {MaxPayloadLength} bytes.", nameof(payload)));
        if (length <= StackFrameLimit)
        {
            Span<byte> frame = stackalloc byte[StackFrameLimit];
            write(target, frame[..FrameCodec.Encode(payload, frame)]);
            return;
        }
        byte[] rented = ArrayPool<byte>.Shared.Rent(length);
        try
        {
            write(target, rented.AsSpan(0, FrameCodec.Encode(payload, rented)));
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }
}
