using System.Collections;
using System.Text;

namespace Spindle.Files;

/// <summary>
/// The lines of a file, read lazily as <see cref="File.ReadLines(string, Encoding)"/> reads them: the file is opened
/// when the sequence is made (so that a missing file throws at once); the first enumeration on the creating thread
/// uses that reader, any other enumeration opens the file again; disposing the enumerator closes the file.
/// </summary>
internal sealed class LineIterator : IEnumerable<string>, IEnumerator<string>
{
    private readonly string _path;
    private readonly Encoding _encoding;
    private readonly int _threadId;  // the thread that may reuse this object as its own first enumerator
    private StreamReader? _reader;   // null once the end was reached or the enumerator was disposed
    private string? _current;
    private int _state;              // 0 not enumerated yet, 1 enumerating, -1 finished or disposed

    private LineIterator(string path, Encoding encoding, StreamReader reader)
    {
        _path = path;
        _encoding = encoding;
        _reader = reader;
        _threadId = Environment.CurrentManagedThreadId;
    }

    internal static LineIterator Create(string path, Encoding encoding)
        => new(path, encoding, TextRead.OpenReader(path, encoding));

    public string Current => _current!;

    object IEnumerator.Current => Current;

    public IEnumerator<string> GetEnumerator()
    {
        if (_state == 0 && _threadId == Environment.CurrentManagedThreadId)
        {
            _state = 1;
            return this;
        }
        LineIterator again = Create(_path, _encoding);
        again._state = 1;
        return again;
    }

    IEnumerator IEnumerable.GetEnumerator() => GetEnumerator();

    public bool MoveNext()
    {
        if (_reader is not null)
        {
            _current = _reader.ReadLine();
            if (_current is not null)
            {
                return true;
            }
            Dispose();
        }
        return false;
    }

    public void Reset() => throw new NotSupportedException("Specified method is not supported.");

    public void Dispose()
    {
        _reader?.Dispose();
        _reader = null;
        _current = null;
        _state = -1;
    }
}
