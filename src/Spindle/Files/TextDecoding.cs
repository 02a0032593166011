using System.Buffers;
using System.Text;

namespace Spindle.Files;

/// <summary>
/// <see cref="StreamReader"/>'s rules for a whole file in memory (System.IO's text reads always detect byte order
/// marks): the given encoding's own preamble is skipped first and then wins; otherwise a UTF-16 BE/LE, UTF-8
/// or UTF-32 BE/LE mark picks the encoding and is skipped; otherwise the bytes are decoded as given. Decoding
/// everything at once gives what the reader's chunk-by-chunk decoder gives, since a decoder carries partial
/// sequences across chunks and flushes at the end.
/// </summary>
internal static class TextDecoding
{
    // StreamReader's UTF-32 big-endian encoding for a detected mark (there is no static instance).
    private static readonly UTF32Encoding s_utf32BigEndian = new(bigEndian: true, byteOrderMark: true);

    /// <summary>The encoding the bytes are decoded with, and how many leading bytes are a mark to skip.</summary>
    internal static Encoding Detect(ReadOnlySpan<byte> bytes, Encoding encoding, out int skip)
    {
        ReadOnlySpan<byte> preamble = encoding.Preamble;
        if (!preamble.IsEmpty)
        {
            if (bytes.Length >= preamble.Length ? bytes.StartsWith(preamble) : preamble.StartsWith(bytes))
            {
                // The reader's preamble check: a full match is skipped and turns detection off; a file shorter than
                // the preamble that matches it so far is decoded as it is, with the given encoding.
                skip = bytes.Length >= preamble.Length ? preamble.Length : 0;
                return encoding;
            }
        }
        skip = 0;
        if (bytes.Length < 2)
        {
            return encoding;
        }
        byte first = bytes[0], second = bytes[1];
        if (first == 0xFE && second == 0xFF)
        {
            skip = 2;
            return Encoding.BigEndianUnicode;
        }
        if (first == 0xFF && second == 0xFE)
        {
            if (bytes.Length < 4 || bytes[2] != 0 || bytes[3] != 0)
            {
                skip = 2;
                return Encoding.Unicode;
            }
            skip = 4;
            return Encoding.UTF32;
        }
        if (bytes.Length >= 3 && first == 0xEF && second == 0xBB && bytes[2] == 0xBF)
        {
            skip = 3;
            return Encoding.UTF8;
        }
        if (bytes.Length >= 4 && first == 0 && second == 0 && bytes[2] == 0xFE && bytes[3] == 0xFF)
        {
            skip = 4;
            return s_utf32BigEndian;
        }
        return encoding;
    }

    /// <summary>The text of a whole file, as <see cref="StreamReader.ReadToEnd"/> gives it; allocates only the string.</summary>
    internal static string GetString(ReadOnlySpan<byte> bytes, Encoding encoding)
    {
        Encoding actual = Detect(bytes, encoding, out int skip);
        return actual.GetString(bytes.Slice(skip));
    }

    /// <summary>
    /// The lines of a whole file, as <see cref="StreamReader.ReadLine"/> splits them (at <c>\r</c>, <c>\n</c> or
    /// <c>\r\n</c>; no empty line after a final terminator); allocates only the array and its strings.
    /// </summary>
    internal static string[] GetLines(ReadOnlySpan<byte> bytes, Encoding encoding)
    {
        Encoding actual = Detect(bytes, encoding, out int skip);
        bytes = bytes.Slice(skip);
        if (bytes.IsEmpty)
        {
            return [];
        }
        char[] chars = ArrayPool<char>.Shared.Rent(actual.GetMaxCharCount(bytes.Length));
        try
        {
            int count = actual.GetChars(bytes, chars);
            return Split(chars.AsSpan(0, count));
        }
        finally
        {
            ArrayPool<char>.Shared.Return(chars);
        }
    }

    /// <summary>Splits text into lines: counted first, so that the array is allocated once at its size.</summary>
    internal static string[] Split(ReadOnlySpan<char> text)
    {
        int lines = 0;
        for (ReadOnlySpan<char> rest = text; !rest.IsEmpty; lines++)
        {
            rest = rest.Slice(LineLength(rest, out int terminator) + terminator);
        }
        var result = new string[lines];
        ReadOnlySpan<char> remaining = text;
        for (int i = 0; i < result.Length; i++)
        {
            int length = LineLength(remaining, out int terminator);
            result[i] = new string(remaining.Slice(0, length));
            remaining = remaining.Slice(length + terminator);
        }
        return result;
    }

    /// <summary>The length of the first line of <paramref name="text"/> and of its terminator (0, 1 or 2).</summary>
    private static int LineLength(ReadOnlySpan<char> text, out int terminator)
    {
        int end = text.IndexOfAny('\r', '\n');
        if (end < 0)
        {
            terminator = 0;
            return text.Length;
        }
        terminator = text[end] == '\r' && end + 1 < text.Length && text[end + 1] == '\n' ? 2 : 1;
        return end;
    }
}
