using System.Runtime.CompilerServices;
using System.Text;
using Microsoft.Win32.SafeHandles;
using Spindle.Files;

namespace Spindle;

public static partial class SpindleFile
{
    /// <summary>Reads the lines of a UTF-8 file lazily, as <see cref="File.ReadLines(string)"/> does.</summary>
    /// <param name="path">The file to read; it is opened before this method returns.</param>
    /// <returns>The file's lines, read as they are enumerated.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    /// <exception cref="IOException">The file could not be opened; see <see cref="ReadAllBytes(string)"/>.</exception>
    public static IEnumerable<string> ReadLines(string path) => ReadLines(path, Encoding.UTF8);

    /// <summary>
    /// Reads the lines of a file lazily, as <see cref="File.ReadLines(string, Encoding)"/> does: opened at once, read
    /// through a Spindle stream as the lines are enumerated, closed at the end or when the enumerator is disposed.
    /// </summary>
    /// <param name="path">The file to read; it is opened before this method returns.</param>
    /// <param name="encoding">The encoding of the text when the file has no byte order mark.</param>
    /// <returns>The file's lines, read as they are enumerated.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> or <paramref name="encoding"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    /// <exception cref="IOException">The file could not be opened; see <see cref="ReadAllBytes(string)"/>.</exception>
    public static IEnumerable<string> ReadLines(string path, Encoding encoding)
    {
        Validate(path, encoding);
        if (Portable.PassThrough.Enabled)
        {
            return File.ReadLines(path, encoding);
        }
        return LineIterator.Create(path, encoding);
    }

    /// <summary>Reads the lines of a UTF-8 file as an asynchronous sequence, as <see cref="File.ReadLinesAsync(string, CancellationToken)"/> does.</summary>
    /// <param name="path">The file to read; it is opened before this method returns.</param>
    /// <param name="cancellationToken">Cancels the enumeration.</param>
    /// <returns>The file's lines, read as they are enumerated.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    /// <exception cref="IOException">The file could not be opened; see <see cref="ReadAllBytes(string)"/>.</exception>
    public static IAsyncEnumerable<string> ReadLinesAsync(string path, CancellationToken cancellationToken = default)
        => ReadLinesAsync(path, Encoding.UTF8, cancellationToken);

    /// <summary>
    /// Reads the lines of a file as an asynchronous sequence, as <see cref="File.ReadLinesAsync(string, Encoding, CancellationToken)"/>
    /// does: opened at once, read on the default engine as the lines are enumerated; a second enumeration opens the file again.
    /// </summary>
    /// <param name="path">The file to read; it is opened before this method returns.</param>
    /// <param name="encoding">The encoding of the text when the file has no byte order mark.</param>
    /// <param name="cancellationToken">Cancels the enumeration.</param>
    /// <returns>The file's lines, read as they are enumerated.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> or <paramref name="encoding"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    /// <exception cref="IOException">The file could not be opened; see <see cref="ReadAllBytes(string)"/>.</exception>
    public static IAsyncEnumerable<string> ReadLinesAsync(string path, Encoding encoding, CancellationToken cancellationToken = default)
    {
        Validate(path, encoding);
        if (Portable.PassThrough.Enabled)
        {
            return File.ReadLinesAsync(path, encoding, cancellationToken);
        }
        return IterateLinesAsync(TextRead.OpenReader(path, encoding, isAsync: true), path, encoding, cancellationToken);
    }

    private static async IAsyncEnumerable<string> IterateLinesAsync(StreamReader reader, string path, Encoding encoding,
        CancellationToken sequenceToken, [EnumeratorCancellation] CancellationToken enumeratorToken = default)
    {
        if (!reader.BaseStream.CanRead)
        {
            // Enumerated before: the first enumeration closed the reader the call opened.
            reader = TextRead.OpenReader(path, encoding, isAsync: true);
        }
        using (reader)
        {
            using var both = CancellationTokenSource.CreateLinkedTokenSource(sequenceToken, enumeratorToken);
            while (await reader.ReadLineAsync(both.Token).ConfigureAwait(false) is string line)
            {
                yield return line;
            }
        }
    }

    /// <summary>Creates or overwrites a file with lines of UTF-8 text, as <see cref="File.WriteAllLines(string, string[])"/> does.</summary>
    /// <param name="path">The file to write.</param>
    /// <param name="contents">The lines, each written with <see cref="Environment.NewLine"/> after it.</param>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> or <paramref name="contents"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    /// <exception cref="IOException">The file could not be opened or written; see <see cref="WriteAllBytes(string, byte[])"/>.</exception>
    public static void WriteAllLines(string path, string[] contents) => WriteAllLines(path, (IEnumerable<string>)contents);

    /// <summary>Creates or overwrites a file with lines of UTF-8 text, as <see cref="File.WriteAllLines(string, IEnumerable{string})"/> does.</summary>
    /// <param name="path">The file to write.</param>
    /// <param name="contents">The lines, each written with <see cref="Environment.NewLine"/> after it.</param>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> or <paramref name="contents"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    /// <exception cref="IOException">The file could not be opened or written; see <see cref="WriteAllBytes(string, byte[])"/>.</exception>
    public static void WriteAllLines(string path, IEnumerable<string> contents) => WriteAllLines(path, contents, TextWrite.UTF8NoBOM);

    /// <summary>Creates or overwrites a file with lines of text, as <see cref="File.WriteAllLines(string, string[], Encoding)"/> does.</summary>
    /// <param name="path">The file to write.</param>
    /// <param name="contents">The lines, each written with <see cref="Environment.NewLine"/> after it.</param>
    /// <param name="encoding">The encoding of the text; its preamble starts the file.</param>
    /// <exception cref="ArgumentNullException"><paramref name="path"/>, <paramref name="contents"/> or <paramref name="encoding"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    /// <exception cref="IOException">The file could not be opened or written; see <see cref="WriteAllBytes(string, byte[])"/>.</exception>
    public static void WriteAllLines(string path, string[] contents, Encoding encoding) => WriteAllLines(path, (IEnumerable<string>)contents, encoding);

    /// <summary>
    /// Creates or overwrites a file with lines of text, as <see cref="File.WriteAllLines(string, IEnumerable{string}, Encoding)"/>
    /// does: encoded into a pooled buffer that is written whenever it fills.
    /// </summary>
    /// <param name="path">The file to write.</param>
    /// <param name="contents">The lines, each written with <see cref="Environment.NewLine"/> after it.</param>
    /// <param name="encoding">The encoding of the text; its preamble starts the file.</param>
    /// <exception cref="ArgumentNullException"><paramref name="path"/>, <paramref name="contents"/> or <paramref name="encoding"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    /// <exception cref="IOException">The file could not be opened or written; see <see cref="WriteAllBytes(string, byte[])"/>.</exception>
    public static void WriteAllLines(string path, IEnumerable<string> contents, Encoding encoding)
    {
        Validate(path, encoding);
        ArgumentNullException.ThrowIfNull(contents);
        if (Portable.PassThrough.Enabled)
        {
            File.WriteAllLines(path, contents, encoding);
            return;
        }
        WriteLines(path, FileMode.Create, contents, encoding);
    }

    /// <summary>Appends lines of UTF-8 text to a file, as <see cref="File.AppendAllLines(string, IEnumerable{string})"/> does.</summary>
    /// <param name="path">The file to append to.</param>
    /// <param name="contents">The lines, each written with <see cref="Environment.NewLine"/> after it.</param>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> or <paramref name="contents"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    /// <exception cref="IOException">The file could not be opened or written; see <see cref="WriteAllBytes(string, byte[])"/>.</exception>
    public static void AppendAllLines(string path, IEnumerable<string> contents) => AppendAllLines(path, contents, TextWrite.UTF8NoBOM);

    /// <summary>Appends lines of text to a file, as <see cref="File.AppendAllLines(string, IEnumerable{string}, Encoding)"/> does: the preamble only when the file is empty.</summary>
    /// <param name="path">The file to append to.</param>
    /// <param name="contents">The lines, each written with <see cref="Environment.NewLine"/> after it.</param>
    /// <param name="encoding">The encoding of the text.</param>
    /// <exception cref="ArgumentNullException"><paramref name="path"/>, <paramref name="contents"/> or <paramref name="encoding"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    /// <exception cref="IOException">The file could not be opened or written; see <see cref="WriteAllBytes(string, byte[])"/>.</exception>
    public static void AppendAllLines(string path, IEnumerable<string> contents, Encoding encoding)
    {
        Validate(path, encoding);
        ArgumentNullException.ThrowIfNull(contents);
        if (Portable.PassThrough.Enabled)
        {
            File.AppendAllLines(path, contents, encoding);
            return;
        }
        WriteLines(path, FileMode.Append, contents, encoding);
    }

    private static void WriteLines(string path, FileMode mode, IEnumerable<string> contents, Encoding encoding)
    {
        using SafeFileHandle handle = OpenHandle(path, mode, FileAccess.Write, FileShare.Read);
        TextWrite.WriteLines(handle, contents, encoding, mode == FileMode.Append ? FileContent.AppendOffset(handle) : 0);
    }

    /// <summary>Creates or overwrites a file with lines of UTF-8 text asynchronously, as <see cref="File.WriteAllLinesAsync(string, IEnumerable{string}, CancellationToken)"/> does.</summary>
    /// <param name="path">The file to write.</param>
    /// <param name="contents">The lines, each written with <see cref="Environment.NewLine"/> after it.</param>
    /// <param name="cancellationToken">Cancels the writes.</param>
    /// <returns>A task that completes when the lines are written; errors of the open and the writes come through it.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> or <paramref name="contents"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    public static Task WriteAllLinesAsync(string path, IEnumerable<string> contents, CancellationToken cancellationToken = default)
        => WriteAllLinesAsync(path, contents, TextWrite.UTF8NoBOM, cancellationToken);

    /// <summary>Creates or overwrites a file with lines of text asynchronously, as <see cref="File.WriteAllLinesAsync(string, IEnumerable{string}, Encoding, CancellationToken)"/> does.</summary>
    /// <param name="path">The file to write.</param>
    /// <param name="contents">The lines, each written with <see cref="Environment.NewLine"/> after it.</param>
    /// <param name="encoding">The encoding of the text; its preamble starts the file.</param>
    /// <param name="cancellationToken">Cancels the writes.</param>
    /// <returns>A task that completes when the lines are written; errors of the open and the writes come through it.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/>, <paramref name="contents"/> or <paramref name="encoding"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    public static Task WriteAllLinesAsync(string path, IEnumerable<string> contents, Encoding encoding, CancellationToken cancellationToken = default)
    {
        Validate(path, encoding);
        ArgumentNullException.ThrowIfNull(contents);
        if (Portable.PassThrough.Enabled)
        {
            return File.WriteAllLinesAsync(path, contents, encoding, cancellationToken);
        }
        return WriteLinesAsync(path, FileMode.Create, contents, encoding, cancellationToken);
    }

    /// <summary>Appends lines of UTF-8 text to a file asynchronously, as <see cref="File.AppendAllLinesAsync(string, IEnumerable{string}, CancellationToken)"/> does.</summary>
    /// <param name="path">The file to append to.</param>
    /// <param name="contents">The lines, each written with <see cref="Environment.NewLine"/> after it.</param>
    /// <param name="cancellationToken">Cancels the writes.</param>
    /// <returns>A task that completes when the lines are written; errors of the open and the writes come through it.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> or <paramref name="contents"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    public static Task AppendAllLinesAsync(string path, IEnumerable<string> contents, CancellationToken cancellationToken = default)
        => AppendAllLinesAsync(path, contents, TextWrite.UTF8NoBOM, cancellationToken);

    /// <summary>Appends lines of text to a file asynchronously, as <see cref="File.AppendAllLinesAsync(string, IEnumerable{string}, Encoding, CancellationToken)"/> does.</summary>
    /// <param name="path">The file to append to.</param>
    /// <param name="contents">The lines, each written with <see cref="Environment.NewLine"/> after it.</param>
    /// <param name="encoding">The encoding of the text.</param>
    /// <param name="cancellationToken">Cancels the writes.</param>
    /// <returns>A task that completes when the lines are written; errors of the open and the writes come through it.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/>, <paramref name="contents"/> or <paramref name="encoding"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    public static Task AppendAllLinesAsync(string path, IEnumerable<string> contents, Encoding encoding, CancellationToken cancellationToken = default)
    {
        Validate(path, encoding);
        ArgumentNullException.ThrowIfNull(contents);
        if (Portable.PassThrough.Enabled)
        {
            return File.AppendAllLinesAsync(path, contents, encoding, cancellationToken);
        }
        return WriteLinesAsync(path, FileMode.Append, contents, encoding, cancellationToken);
    }

    private static Task WriteLinesAsync(string path, FileMode mode, IEnumerable<string> contents, Encoding encoding, CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return Task.FromCanceled(cancellationToken);
        }
        SafeFileHandle handle;
        long offset;
        try
        {
            handle = OpenHandle(path, mode, FileAccess.Write, FileShare.Read, FileOptions.Asynchronous);
        }
        catch (Exception e)
        {
            return Task.FromException(e);
        }
        try
        {
            offset = mode == FileMode.Append ? FileContent.AppendOffset(handle) : 0;
        }
        catch (Exception e)
        {
            handle.Dispose();
            return Task.FromException(e);
        }
        return TextWrite.WriteLinesAsync(handle, contents, encoding, offset, cancellationToken);
    }
}
