using Spindle.Append;
using Spindle.Diagnostics;

namespace Spindle;

/// <summary>
/// Reads the records of a log written with <see cref="AppendLog"/> one at a time from a stream, holding no
/// more than the largest frame in memory: every whole record in file order, and the stretches that are not
/// one (a torn record, an unfinished tail), which it skips.
/// </summary>
/// <remarks>
/// A record is returned only when its frame starts at a zero byte and its length and checksum agree; no zero
/// byte occurs inside a frame, so damage never makes the reader take part of a payload for a record, and it
/// looks at each byte once whatever the damage holds.
/// </remarks>
public sealed class AppendLogReader : IDisposable
{
    private const int InitialBufferSize = 64 * 1024;

    // The longest piece between two delimiters that can be a frame: a longer one is damage, skipped unbuffered.
    private static readonly int s_longestFrame = FrameCodec.MaxFrameLength(AppendLog.MaxPayloadLength);

    private readonly Stream _stream;
    private readonly bool _leaveOpen;
    private readonly List<(long Offset, long Length)> _damaged = [];
    private byte[] _buffer = new byte[InitialBufferSize]; // read but not scanned: [_start, _end)
    private int _start;             // where the current piece begins (its delimiter, or damage without one)
    private int _end;               // the end of what was read
    private int _searched = -1;     // how far the current piece was searched for the next delimiter; -1: not begun
    private long _bufferOffset;     // the stream offset of _buffer[0], from where the reader started
    private bool _skipping;         // the current piece is longer than any frame: damage, its bytes dropped as read
    private bool _endOfStream;      // the stream has no more bytes
    private long _damageStart = -1; // where the damage being skipped began, or -1
    private byte[] _scratch = [];   // the current record, decoded
    private bool _disposed;

    /// <summary>Reads the log in <paramref name="stream"/> from its current position.</summary>
    /// <param name="stream">The stream to read; offsets in <see cref="Damaged"/> count from its position now.</param>
    /// <param name="leaveOpen">Whether <see cref="Dispose"/> leaves the stream open.</param>
    /// <exception cref="ArgumentNullException"><paramref name="stream"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="stream"/> cannot read.</exception>
    public AppendLogReader(Stream stream, bool leaveOpen = false)
    {
        ArgumentNullException.ThrowIfNull(stream);
        if (!stream.CanRead)
        {
            throw new ArgumentException("Stream was not readable."); // as StreamReader words it, naming no parameter
        }
        _stream = stream;
        _leaveOpen = leaveOpen;
    }

    /// <summary>Reads the log in the file at <paramref name="path"/>.</summary>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is null.</exception>
    /// <exception cref="IOException">The file cannot be opened; the exceptions are <see cref="File.OpenRead(string)"/>'s.</exception>
    /// <exception cref="UnauthorizedAccessException">The path is a directory or may not be read.</exception>
    public AppendLogReader(string path)
        : this(new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.Read, bufferSize: 1, FileOptions.SequentialScan))
    {
    }

    /// <summary>The payload of the record the last <see cref="Read"/> returned; valid until the next read or <see cref="Dispose"/>.</summary>
    public ReadOnlyMemory<byte> Record { get; private set; }

    /// <summary>The stretches skipped so far, each as (offset, length): whole once a read returned false.</summary>
    public IReadOnlyList<(long Offset, long Length)> Damaged => _damaged;

    // The stream's length when it can say, else 0; a capacity hint.
    internal long StreamLength => _stream.CanSeek ? Math.Max(0, _stream.Length - _stream.Position) : 0;

    /// <summary>Moves to the next whole record; false at the end of the log.</summary>
    /// <exception cref="ObjectDisposedException">The reader is disposed.</exception>
    /// <exception cref="IOException">The stream failed.</exception>
    public bool Read()
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        while (!TryNext())
        {
            if (_endOfStream)
            {
                return false;
            }
            int read = _stream.Read(PrepareFill());
            _endOfStream = read == 0;
            _end += read;
        }
        return true;
    }

    /// <summary>Moves to the next whole record, reading the stream asynchronously; false at the end of the log.</summary>
    /// <exception cref="ObjectDisposedException">The reader is disposed.</exception>
    /// <exception cref="IOException">The stream failed.</exception>
    /// <exception cref="OperationCanceledException"><paramref name="cancellationToken"/> was cancelled.</exception>
    public async ValueTask<bool> ReadAsync(CancellationToken cancellationToken = default)
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        cancellationToken.ThrowIfCancellationRequested();
        while (!TryNext())
        {
            if (_endOfStream)
            {
                return false;
            }
            int read = await _stream.ReadAsync(PrepareFillMemory(), cancellationToken).ConfigureAwait(false);
            _endOfStream = read == 0;
            _end += read;
        }
        return true;
    }

    /// <summary>Closes the stream unless the reader was told to leave it open.</summary>
    public void Dispose()
    {
        if (!_disposed)
        {
            _disposed = true;
            Record = default;
            if (!_leaveOpen)
            {
                _stream.Dispose();
            }
        }
    }

    // Takes the pieces the buffer holds whole (up to the next delimiter, or the end of the stream): true with
    // the next record, false when the buffer needs more bytes or the log ended.
    private bool TryNext()
    {
        while (_start < _end)
        {
            if (_searched < 0)
            {
                // A new piece: a frame starts with the delimiter; anything else before the next one is damage.
                _searched = _buffer[_start] == FrameCodec.Delimiter && !_skipping ? _start + 1 : _start;
            }
            int next = _buffer.AsSpan(_searched, _end - _searched).IndexOf(FrameCodec.Delimiter);
            int pieceEnd;
            if (next >= 0)
            {
                pieceEnd = _searched + next;
            }
            else if (_endOfStream)
            {
                pieceEnd = _end;
            }
            else
            {
                _searched = _end;
                if (_end - _start > s_longestFrame)
                {
                    // Longer than any frame: damage; what was read of it need not be kept.
                    Damage(_bufferOffset + _start);
                    _skipping = true;
                    _start = _end;
                    _searched = -1;
                }
                return false;
            }
            long offset = _bufferOffset + _start;
            int consumed = 0;
            int length = _skipping || _buffer[_start] != FrameCodec.Delimiter ? -1 : DecodeAt(_start + 1, pieceEnd, out consumed);
            _start = pieceEnd;
            _searched = -1;
            _skipping = false;
            if (length >= 0)
            {
                EndDamage(offset);
                Record = _scratch.AsMemory(FrameCodec.PrefixSize, length);
                if (offset + 1 + consumed < _bufferOffset + pieceEnd)
                {
                    // Bytes after the frame with no delimiter of their own (not written by AppendLog): damage.
                    Damage(offset + 1 + consumed);
                }
                return true;
            }
            Damage(offset);
        }
        if (_endOfStream)
        {
            EndDamage(_bufferOffset + _end);
            Record = default;
        }
        return false;
    }

    private int DecodeAt(int from, int to, out int consumed)
    {
        consumed = 0;
        if (to - from > s_longestFrame)
        {
            return -1;
        }
        if (_scratch.Length < to - from)
        {
            _scratch = new byte[Math.Max(to - from, Math.Min(2 * (long)_scratch.Length, Array.MaxLength))];
        }
        EngineProbe.Current?.LogBytesDecoded(to - from);
        return FrameCodec.Decode(_buffer.AsSpan(from, to - from), _scratch, out consumed);
    }

    private void Damage(long offset)
    {
        if (_damageStart < 0)
        {
            _damageStart = offset;
        }
    }

    private void EndDamage(long offset)
    {
        if (_damageStart >= 0)
        {
            _damaged.Add((_damageStart, offset - _damageStart));
            _damageStart = -1;
        }
    }

    private Span<byte> PrepareFill() => PrepareFillMemory().Span;

    // Moves the unscanned bytes to the front, grows the buffer when a piece fills it, and returns the free part.
    private Memory<byte> PrepareFillMemory()
    {
        if (_start > 0)
        {
            _buffer.AsSpan(_start, _end - _start).CopyTo(_buffer);
            _bufferOffset += _start;
            _end -= _start;
            _searched = _searched < 0 ? -1 : _searched - _start;
            _start = 0;
        }
        if (_end == _buffer.Length)
        {
            byte[] larger = new byte[(int)Math.Min(2L * _buffer.Length, Array.MaxLength)];
            _buffer.AsSpan(0, _end).CopyTo(larger);
            _buffer = larger;
        }
        return _buffer.AsMemory(_end);
    }
}
