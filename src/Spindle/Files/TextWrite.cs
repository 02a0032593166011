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
    /// <see cref="Environment.NewLine"/>, the preamble first at the start of a file, even with no line), through a
    /// pooled buffer written whenever it fills. A sequence that throws leaves in the file the lines before the
    /// failure, as System.IO's writer does when it is disposed.
    /// </summary>
    internal static void WriteLines(SafeFileHandle handle, IEnumerable<string> contents, Encoding encoding, long offset)
    {
        var lines = new LineBuffer(encoding, offset);
        try
        {
            foreach (string line in contents)
            {
                while (!lines.TryAdd(line))
                {
                    FileContent.Write(handle, lines.Pending.Span, lines.Offset);
                    lines.Written();
                }
            }
        }
        finally
        {
            try
            {
                FileContent.Write(handle, lines.Pending.Span, lines.Offset);
            }
            finally
            {
                lines.Release();
            }
        }
    }

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
                        while (!lines.TryAdd(line))
                        {
                            await WriteAsync(handle, lines.Pending, lines.Offset, cancellationToken).ConfigureAwait(false);
                            lines.Written();
                        }
                    }
                }
                catch (Exception e) when (e is not OperationCanceledException)
                {
                    // The sequence threw: what came before it still reaches the file.
                    FileContent.Write(handle, lines.Pending.Span, lines.Offset);
                    throw;
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

    /// <summary>Encoded lines waiting to be written (the preamble first when the file starts empty), and where they go.</summary>
    private struct LineBuffer
    {
        private readonly Encoding _encoding;
        private byte[] _buffer;  // pooled; returned by Release
        private int _count;      // encoded bytes waiting in _buffer
        private long _offset;    // where _buffer[0] goes in the file

        internal LineBuffer(Encoding encoding, long offset)
        {
            _encoding = encoding;
            _buffer = ArrayPool<byte>.Shared.Rent(LinesBufferSize);
            _offset = offset;
            if (offset == 0)
            {
                ReadOnlySpan<byte> preamble = encoding.Preamble;
                preamble.CopyTo(_buffer);
                _count = preamble.Length;
            }
        }

        internal readonly ReadOnlyMemory<byte> Pending => _buffer.AsMemory(0, _count);

        internal readonly long Offset => _offset;

        /// <summary>Encodes a line and its terminator; false when they may not fit, after growing a buffer too small for them alone.</summary>
        internal bool TryAdd(string? line)
        {
            ReadOnlySpan<char> text = line;
            string newLine = Environment.NewLine;
            int needed = _encoding.GetMaxByteCount(text.Length + newLine.Length);
            if (_buffer.Length - _count < needed)
            {
                if (_count > 0)
                {
                    return false;
                }
                ArrayPool<byte>.Shared.Return(_buffer);
                _buffer = ArrayPool<byte>.Shared.Rent(needed);
            }
            _count += _encoding.GetBytes(text, _buffer.AsSpan(_count));
            _count += _encoding.GetBytes(newLine, _buffer.AsSpan(_count));
            return true;
        }

        /// <summary>The pending bytes reached the file.</summary>
        internal void Written()
        {
            _offset += _count;
            _count = 0;
        }

        internal void Release()
        {
            ArrayPool<byte>.Shared.Return(_buffer);
            _buffer = [];
            _count = 0;
        }
    }
}
