using System.Buffers.Binary;

namespace Spindle.Append;

/// <summary>
/// The frame format of <see cref="AppendLog"/>: a zero byte, then the COBS encoding (Consistent Overhead Byte
/// Stuffing) of the payload's length (4 bytes, little-endian), a CRC-32C of length and payload (4 bytes), and
/// the payload. COBS leaves no zero byte in what it encodes, so a zero byte in a log is always the start of a
/// frame: a scan splits the file at zero bytes, and each piece between two is one frame or damage. A frame
/// inside a payload is encoded with it, so it can never be taken for a record, and no piece is looked at twice.
/// </summary>
internal static class FrameCodec
{
    /// <summary>The byte that starts every frame and appears nowhere else in one.</summary>
    internal const byte Delimiter = 0;

    /// <summary>Length and checksum, encoded in front of the payload.</summary>
    internal const int PrefixSize = 8;

    // A COBS block holds at most 254 bytes without a zero; its code byte says how many (plus one).
    private const int LongestRun = 254;

    /// <summary>The most bytes the frame of a payload of <paramref name="payloadLength"/> bytes takes (the delimiter included).</summary>
    internal static int MaxFrameLength(int payloadLength) => 1 + MaxEncodedLength(PrefixSize + payloadLength);

    /// <summary>The longest encoding of <paramref name="length"/> bytes: one code byte per block of up to 254 bytes, and one more.</summary>
    internal static int MaxEncodedLength(long length) => (int)Math.Min(int.MaxValue, length + length / LongestRun + 1);

    /// <summary>Writes the frame of <paramref name="payload"/> (the caller checked that <paramref name="destination"/> holds <see cref="MaxFrameLength"/>) and returns its length.</summary>
    internal static int Encode(ReadOnlySpan<byte> payload, Span<byte> destination)
    {
        Span<byte> prefix = stackalloc byte[PrefixSize];
        BinaryPrimitives.WriteInt32LittleEndian(prefix, payload.Length);
        BinaryPrimitives.WriteUInt32LittleEndian(prefix[4..], Crc32C.Finish(Crc32C.Append(Crc32C.Append(Crc32C.Seed, prefix[..4]), payload)));
        destination[0] = Delimiter;
        int code = 1;        // where the current block's code byte goes
        int written = 2;     // the next free byte
        Stuff(prefix, destination, ref code, ref written);
        Stuff(payload, destination, ref code, ref written);
        destination[code] = (byte)(written - code);
        return written;
    }

    // Copies runs of non-zero bytes in blocks of at most 254; a zero ends a block (its code byte stands for it).
    private static void Stuff(ReadOnlySpan<byte> source, Span<byte> destination, ref int code, ref int written)
    {
        while (!source.IsEmpty)
        {
            int room = LongestRun - (written - code - 1);
            ReadOnlySpan<byte> chunk = source[..Math.Min(room, source.Length)];
            int zero = chunk.IndexOf(Delimiter);
            if (zero >= 0)
            {
                chunk[..zero].CopyTo(destination[written..]);
                written += zero;
                destination[code] = (byte)(written - code);
                code = written++;
                source = source[(zero + 1)..];
                continue;
            }
            chunk.CopyTo(destination[written..]);
            written += chunk.Length;
            source = source[chunk.Length..];
            if (written - code - 1 == LongestRun)
            {
                destination[code] = 0xFF;
                code = written++;
            }
        }
    }

    /// <summary>
    /// Decodes the frame at the start of one piece of a log (the bytes after a delimiter, up to the next one or
    /// the end) into <paramref name="scratch"/> (at least as long as the piece) and checks it: the payload's
    /// length (the payload follows <see cref="PrefixSize"/> bytes in <paramref name="scratch"/>), or -1 when the
    /// piece does not start with a whole frame. <paramref name="consumed"/> is how much of the piece the frame
    /// takes; what follows it in the piece is damage.
    /// </summary>
    internal static int Decode(ReadOnlySpan<byte> piece, Span<byte> scratch, out int consumed)
    {
        int read = 0, decoded = 0;
        long frameLength = -1; // the decoded length the prefix claims, once read
        consumed = 0;
        while (read < piece.Length)
        {
            int code = piece[read++];
            int run = code - 1;
            if (code == Delimiter || run > piece.Length - read || (frameLength >= 0 && decoded + run > frameLength))
            {
                return -1;
            }
            piece.Slice(read, run).CopyTo(scratch[decoded..]);
            read += run;
            decoded += run;
            if (frameLength < 0 && decoded >= PrefixSize)
            {
                frameLength = PrefixSize + (long)(uint)BinaryPrimitives.ReadInt32LittleEndian(scratch);
            }
            // The encoder ends a frame with a block shorter than 254 bytes: the frame is whole here.
            if (code != 0xFF && decoded == frameLength)
            {
                break;
            }
            if (code != 0xFF && read < piece.Length)
            {
                scratch[decoded++] = 0;
            }
        }
        if (decoded != frameLength || frameLength - PrefixSize > AppendLog.MaxPayload)
        {
            return -1;
        }
        int length = (int)(frameLength - PrefixSize);
        uint crc = Crc32C.Append(Crc32C.Seed, scratch[..4]);
        if (Crc32C.Finish(Crc32C.Append(crc, scratch.Slice(PrefixSize, length))) != BinaryPrimitives.ReadUInt32LittleEndian(scratch[4..]))
        {
            return -1;
        }
        consumed = read;
        return length;
    }
}
