using System.Buffers;
using System.Text;
using Microsoft.Win32.SafeHandles;

namespace Spindle.Files;

/// <summary>
/// Encoding text for the <see cref="File"/> write twins: the preamble (only at the start of a file) and the whole
/// text encoded into one pooled buffer and written with one call, where System.IO writes 8192-character chunks.
/// The bytes are the same: an encoder carries a split surrogate pair across chunks and flushes at the end, which
/// is what one call does. Where the encoding throws on invalid text, the chunks System.IO would have written
/// before the failing one are written first, so that the file holds what it would hold after System.IO.
/// </summary>
internal static class TextWrite
{
    /// <summary>System.IO's chunk of characters: its preallocation threshold and its unit of writing.</summary>
    internal const int ChunkSize = 8192;

    /// <summary>Longer texts are written in chunks as System.IO writes them, so that no buffer holds their whole encoding.</summary>
    private const int MaxOneWriteChars = 16 << 20;

    /// <summary>The bytes a pooled buffer for lines starts with; a longer line grows it.</summary>
    private const int LinesBufferSize = 16 << 10;

    /// <summary>UTF-8 without a byte order mark that throws on invalid text: System.IO's (and StreamWriter's) default.</summary>
    internal static readonly UTF8Encoding UTF8NoBOM = new(encoderShouldEmitUTF8Identifier: false, throwOnInvalidBytes: true);

    /// <summary>System.IO's preallocation for a text write: the encoded length of a long text when the file is created anew.</summary>
    internal static long PreallocationSize(FileMode mode, ReadOnlySpan<char> contents, Encoding encoding, int preambleLength)
        => contents.Length < ChunkSize || mode == FileMode.Append ? 0 : preambleLength + encoding.GetByteCount(contents);

    /// <summary>
    /// Encodes <paramref name="contents"/> (after the preamble when <paramref name="offset"/> is 0) into a pooled
    /// buffer that the caller returns; null when nothing is to be written or when the text was written in chunks.
    /// </summary>
    internal static byte[]? Encode(SafeFileHandle handle, ReadOnlySpan<char> contents, Encoding encoding, long offset, out int count)
    {
        ReadOnlySpan<byte> preamble = offset == 0 ? encoding.Preamble : default;
        if (contents.Length > MaxOneWriteChars)
        {
            WriteChunks(handle, contents, encoding, offset, preamble);
            count = 0;
            return null;
        }
        if (contents.IsEmpty && preamble.IsEmpty)
        {
            count = 0;
            return null;
        }
        byte[] buffer = ArrayPool<byte>.Shared.Rent(checked(preamble.Length + encoding.GetMaxByteCount(contents.Length)));
        try
        {
            preamble.CopyTo(buffer);
            count = preamble.Length + encoding.GetBytes(contents, buffer.AsSpan(preamble.Length));
            return buffer;
        }
        catch (EncoderFallbackException) when (contents.Length > ChunkSize)
        {
            ArrayPool<byte>.Shared.Return(buffer);
            WriteChunks(handle, contents, encoding, offset, preamble); // throws at the chunk System.IO throws at
            throw;
        }
        catch
        {
            ArrayPool<byte>.Shared.Return(buffer);
            throw;
        }
    }

    /// <summary>System.IO's way: 8192 characters at a time through one encoder, each chunk written before the next is encoded.</summary>
    private static void WriteChunks(SafeFileHandle handle, ReadOnlySpan<char> contents, Encoding encoding, long offset, ReadOnlySpan<byte> preamble)
    {
        byte[] buffer = ArrayPool<byte>.Shared.Rent(preamble.Length + encoding.GetMaxByteCount(Math.Min(contents.Length, ChunkSize)));
        try
        {
            preamble.CopyTo(buffer);
            int start = preamble.Length;
            Encoder encoder = encoding.GetEncoder();
            while (!contents.IsEmpty)
            {
                ReadOnlySpan<char> chunk = contents.Slice(0, Math.Min(contents.Length, ChunkSize));
                contents = contents.Slice(chunk.Length);
                int encoded = encoder.GetBytes(chunk, buffer.AsSpan(start), flush: contents.IsEmpty);
                FileContent.Write(handle, buffer.AsSpan(0, start + encoded), offset);
                offset += start + encoded;
                start = 0;
            }
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    /// <summary>
    /// Writes lines as <see cref="StreamWriter.WriteLine(string)"/> does (each followed by
    /// <see cref="Environment.NewLine"/>, the preamble first at the start of a file, even with no line), through
    /// pooled buffers written whenever they fill. The characters are encoded in the writer's blocks of 1024, so
    /// that a failure leaves in the file what System.IO's writer leaves: a sequence that throws, everything before
    /// it; an encoding that throws on invalid text, the blocks before the one it failed in.
    /// </summary>
    internal static void WriteLines(SafeFileHandle handle, IEnumerable<string> contents, Encoding encoding, long offset)
    {
        var lines = new LineBuffer(encoding, offset);
        try
        {
            try
            {
                foreach (string line in contents)
                {
                    int position = 0;
                    while (!lines.Append(line, ref position))
                    {
                        FileContent.Write(handle, lines.Pending.Span, lines.Offset);
                        lines.Written();
                    }
                }
            }
            catch (Exception e) when (e is not EncoderFallbackException)
            {
                WriteRest(handle, ref lines); // as the writer's disposal does
                throw;
            }
            catch (EncoderFallbackException)
            {
                WriteEncodedBeforeFailure(handle, ref lines);
                throw;
            }
            WriteRest(handle, ref lines);
        }
        finally
        {
            lines.Release();
        }
    }

    private static void WriteRest(SafeFileHandle handle, ref LineBuffer lines)
    {
        while (!Finish(handle, ref lines))
        {
            FileContent.Write(handle, lines.Pending.Span, lines.Offset);
            lines.Written();
        }
        FileContent.Write(handle, lines.Pending.Span, lines.Offset);
        lines.Written();
    }

    /// <summary>
    /// Encodes the last block (<see cref="LineBuffer.Finish"/>). An encoder that throws there fails as the writer's
    /// disposal does: what was encoded before it, the preamble included, is in the file.
    /// </summary>
    private static bool Finish(SafeFileHandle handle, ref LineBuffer lines)
    {
        try
        {
            return lines.Finish();
        }
        catch (EncoderFallbackException)
        {
            WriteEncodedBeforeFailure(handle, ref lines);
            throw;
        }
    }

    /// <summary>After an encoder threw: the bytes encoded before it (and the preamble) written, as StreamWriter has written them to its stream.</summary>
    private static void WriteEncodedBeforeFailure(SafeFileHandle handle, ref LineBuffer lines)
        => FileContent.Write(handle, lines.Pending.Span, lines.Offset);

    /// <summary>As <see cref="WriteLines"/>, with the writes on the default engine; disposes <paramref name="handle"/>.</summary>
    internal static async Task WriteLinesAsync(SafeFileHandle handle, IEnumerable<string> contents, Encoding encoding, long offset, CancellationToken cancellationToken)
    {
        using (handle)
        {
            var lines = new LineBuffer(encoding, offset);
            try
            {
                try
                {
                    foreach (string line in contents)
                    {
                        int position = 0;
                        while (!lines.Append(line, ref position))
                        {
                            await WriteAsync(handle, lines.Pending, lines.Offset, cancellationToken).ConfigureAwait(false);
                            lines.Written();
                        }
                    }
                }
                catch (Exception e) when (e is not EncoderFallbackException and not OperationCanceledException)
                {
                    WriteRest(handle, ref lines);
                    throw;
                }
                catch (EncoderFallbackException)
                {
                    WriteEncodedBeforeFailure(handle, ref lines);
                    throw;
                }
                while (!Finish(handle, ref lines))
                {
                    await WriteAsync(handle, lines.Pending, lines.Offset, cancellationToken).ConfigureAwait(false);
                    lines.Written();
                }
                await WriteAsync(handle, lines.Pending, lines.Offset, cancellationToken).ConfigureAwait(false);
            }
            finally
            {
                lines.Release();
            }
        }
    }

    private static ValueTask WriteAsync(SafeFileHandle handle, ReadOnlyMemory<byte> bytes, long offset, CancellationToken cancellationToken)
        => bytes.IsEmpty ? ValueTask.CompletedTask : SpindleRandomAccess.WriteAsync(handle, bytes, offset, cancellationToken);

    /// <summary>
    /// Lines on their way to the file: characters gathered in blocks of <see cref="CharBlock"/>, each encoded when
    /// the next character arrives (as StreamWriter does), into bytes that wait to be written.
    /// </summary>
    private struct LineBuffer
    {
        private const int CharBlock = 1024; // StreamWriter's default buffer of characters

        private readonly Encoding _encoding;
        private readonly Encoder _encoder;
        private readonly int _maxBlockBytes; // the most bytes one block (and a held surrogate) can encode to
        private char[] _chars;               // pooled; the block being gathered
        private int _charCount;
        private byte[] _bytes;               // pooled; encoded bytes not yet written
        private int _byteCount;
        private long _offset;                // where _bytes[0] goes in the file

        internal LineBuffer(Encoding encoding, long offset)
        {
            _encoding = encoding;
            _encoder = encoding.GetEncoder();
            _maxBlockBytes = encoding.GetMaxByteCount(CharBlock + 1);
            _chars = ArrayPool<char>.Shared.Rent(CharBlock);
            _bytes = ArrayPool<byte>.Shared.Rent(Math.Max(LinesBufferSize, 2 * _maxBlockBytes + 16));
            _offset = offset;
            if (offset == 0)
            {
                ReadOnlySpan<byte> preamble = encoding.Preamble;
                preamble.CopyTo(_bytes);
                _byteCount = preamble.Length;
            }
        }

        internal readonly ReadOnlyMemory<byte> Pending => _bytes.AsMemory(0, _byteCount);

        internal readonly long Offset => _offset;

        /// <summary>Gathers a line (from <paramref name="position"/>) and its terminator; false when the bytes must be written first.</summary>
        internal bool Append(string? line, ref int position)
        {
            ReadOnlySpan<char> text = line;
            if (position <= text.Length)
            {
                if (!AppendChars(text, ref position))
                {
                    return false;
                }
            }
            string newLine = Environment.NewLine;
            int newLinePosition = position - text.Length;
            bool done = AppendChars(newLine, ref newLinePosition);
            position = text.Length + newLinePosition;
            return done;
        }

        private bool AppendChars(ReadOnlySpan<char> text, ref int position)
        {
            while (position < text.Length)
            {
                if (_charCount == CharBlock)
                {
                    if (_bytes.Length - _byteCount < _maxBlockBytes)
                    {
                        return false;
                    }
                    Encode(flush: false);
                }
                int count = Math.Min(CharBlock - _charCount, text.Length - position);
                text.Slice(position, count).CopyTo(_chars.AsSpan(_charCount));
                _charCount += count;
                position += count;
            }
            return true;
        }

        /// <summary>Encodes the last block, flushing the encoder; false when the bytes must be written first.</summary>
        internal bool Finish()
        {
            if (_bytes.Length - _byteCount < _maxBlockBytes)
            {
                return false;
            }
            Encode(flush: true);
            return true;
        }

        private void Encode(bool flush)
        {
            _byteCount += _encoder.GetBytes(_chars.AsSpan(0, _charCount), _bytes.AsSpan(_byteCount), flush);
            _charCount = 0;
        }

        /// <summary>The pending bytes reached the file.</summary>
        internal void Written()
        {
            _offset += _byteCount;
            _byteCount = 0;
        }

        internal void Release()
        {
            ArrayPool<char>.Shared.Return(_chars);
            ArrayPool<byte>.Shared.Return(_bytes);
            _chars = [];
            _bytes = [];
            _charCount = 0;
            _byteCount = 0;
        }
    }
}
