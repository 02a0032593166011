using System.Buffers;
using System.Buffers.Binary;
using System.Runtime.Versioning;
using Microsoft.Win32.SafeHandles;
using Spindle.Append;
using Spindle.Interop;
using Spindle.RandomAccess;

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
/// <para>A frame is a 4-byte marker, the payload's length (4 bytes, little-endian) and a CRC-32C of length
/// and payload (4 bytes), then the payload. <see cref="Append(SafeFileHandle, ReadOnlySpan{byte})"/> writes a
/// frame with one <c>write(2)</c>. <see cref="Scan"/> returns every whole record and skips what is not one,
/// finding the next frame by its marker, so one torn record costs only itself.</para>
/// </remarks>
public static partial class AppendLog
{
    /// <summary>The bytes a frame adds in front of its payload.</summary>
    public const int HeaderSize = 12;

    /// <summary>The largest payload a frame holds (1 GiB); a header claiming more is damage.</summary>
    public const int MaxPayloadLength = 1 << 30;

    // "SPRC": where a frame starts, so that a scan can find the next one after a torn record.
    private const uint Marker = 0x43525053;

    // Frames up to this size are built on the stack.
    private const int StackFrameLimit = 1024;

    /// <summary>The length of the frame that holds a payload of <paramref name="payloadLength"/> bytes.</summary>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="payloadLength"/> is negative or above <see cref="MaxPayloadLength"/>.</exception>
    public static int GetFrameLength(int payloadLength)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(payloadLength);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(payloadLength, MaxPayloadLength);
        return HeaderSize + payloadLength;
    }

    /// <summary>Writes the frame of <paramref name="payload"/> into <paramref name="destination"/> and returns its length.</summary>
    /// <exception cref="ArgumentException"><paramref name="payload"/> is longer than <see cref="MaxPayloadLength"/>, or <paramref name="destination"/> is shorter than the frame.</exception>
    public static int WriteFrame(ReadOnlySpan<byte> payload, Span<byte> destination)
    {
        if (payload.Length > MaxPayloadLength)
        {
            throw new ArgumentException($"A record holds at most {MaxPayloadLength} bytes.", nameof(payload));
        }
        int length = HeaderSize + payload.Length;
        if (destination.Length < length)
        {
            throw new ArgumentException($"The frame needs {length} bytes.", nameof(destination));
        }
        BinaryPrimitives.WriteUInt32LittleEndian(destination, Marker);
        BinaryPrimitives.WriteInt32LittleEndian(destination[4..], payload.Length);
        payload.CopyTo(destination[HeaderSize..]);
        uint crc = Crc32C.Append(Crc32C.Seed, destination.Slice(4, 4));
        BinaryPrimitives.WriteUInt32LittleEndian(destination[8..], Crc32C.Finish(Crc32C.Append(crc, payload)));
        return length;
    }

    /// <summary>
    /// Appends <paramref name="payload"/> as one frame, with one <c>write(2)</c>, to a handle opened with
    /// <see cref="SpindleFileOptions.AtomicAppend"/>. The frame is whole in the file unless the writer dies in
    /// the middle of the call or the kernel writes only part of it (a full disk); then <see cref="Scan"/> skips it.
    /// </summary>
    /// <exception cref="ArgumentNullException"><paramref name="handle"/> is null.</exception>
    /// <exception cref="ArgumentException">The handle is invalid or was not opened for appending (<c>O_APPEND</c>), or the payload is too long.</exception>
    /// <exception cref="ObjectDisposedException">The handle is closed.</exception>
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
    /// (a torn record, an unfinished tail), which are skipped. The records are slices of <paramref name="contents"/>.
    /// </summary>
    public static AppendLogScan Scan(ReadOnlyMemory<byte> contents)
    {
        ReadOnlySpan<byte> data = contents.Span;
        var records = new List<ReadOnlyMemory<byte>>();
        var damaged = new List<(long Offset, long Length)>();
        int position = 0;
        int damageStart = -1; // where the stretch being skipped began, or -1
        while (position < data.Length)
        {
            if (TryFrame(data[position..], out int payloadLength))
            {
                if (damageStart >= 0)
                {
                    damaged.Add((damageStart, position - damageStart));
                    damageStart = -1;
                }
                records.Add(contents.Slice(position + HeaderSize, payloadLength));
                position += HeaderSize + payloadLength;
                continue;
            }
            if (damageStart < 0)
            {
                damageStart = position;
            }
            int next = data[(position + 1)..].IndexOf(MarkerBytes);
            position = next < 0 ? data.Length : position + 1 + next;
        }
        if (damageStart >= 0)
        {
            damaged.Add((damageStart, data.Length - damageStart));
        }
        return new AppendLogScan(records, damaged);
    }

    /// <summary>Reads the file at <paramref name="path"/> and scans it (see <see cref="Scan"/>).</summary>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is null.</exception>
    /// <exception cref="IOException">The file cannot be read; the exceptions are <see cref="File.ReadAllBytes(string)"/>'s.</exception>
    public static AppendLogScan ReadAll(string path) => Scan(File.ReadAllBytes(path));

    private static ReadOnlySpan<byte> MarkerBytes => "SPRC"u8;

    private static bool TryFrame(ReadOnlySpan<byte> data, out int payloadLength)
    {
        payloadLength = 0;
        if (data.Length < HeaderSize || BinaryPrimitives.ReadUInt32LittleEndian(data) != Marker)
        {
            return false;
        }
        int length = BinaryPrimitives.ReadInt32LittleEndian(data[4..]);
        if (length < 0 || length > MaxPayloadLength || length > data.Length - HeaderSize)
        {
            return false;
        }
        uint crc = Crc32C.Append(Crc32C.Seed, data.Slice(4, 4));
        if (Crc32C.Finish(Crc32C.Append(crc, data.Slice(HeaderSize, length))) != BinaryPrimitives.ReadUInt32LittleEndian(data[8..]))
        {
            return false;
        }
        payloadLength = length;
        return true;
    }

    private static bool IsAppendHandle(SafeFileHandle handle)
    {
        bool added = false;
        try
        {
            handle.DangerousAddRef(ref added);
            int flags = Libc.Fcntl(HandleIo.Fd(handle), LinuxConstants.F_GETFL, 0);
            return flags >= 0 && (flags & OpenFlags.O_APPEND) != 0;
        }
        finally
        {
            if (added)
            {
                handle.DangerousRelease();
            }
        }
    }

    private delegate void FrameWriter<T>(T target, ReadOnlySpan<byte> frame);

    // Builds the frame on the stack or in a pooled array, so that appending allocates nothing.
    private static void WithFrame<T>(ReadOnlySpan<byte> payload, T target, FrameWriter<T> write)
    {
        int length = GetFrameLength(payload.Length <= MaxPayloadLength ? payload.Length : throw new ArgumentException(
            $"A record holds at most {MaxPayloadLength} bytes.", nameof(payload)));
        if (length <= StackFrameLimit)
        {
            Span<byte> frame = stackalloc byte[StackFrameLimit];
            write(target, frame[..WriteFrame(payload, frame)]);
            return;
        }
        byte[] rented = ArrayPool<byte>.Shared.Rent(length);
        try
        {
            write(target, rented.AsSpan(0, WriteFrame(payload, rented)));
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }
}
