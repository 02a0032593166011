using System.Runtime.CompilerServices;
using System.Text;
using Microsoft.Win32.SafeHandles;
using Spindle.Files;
using Spindle.Handles;

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
    /// <param name="path">The file to read; its open starts before this method returns.</param>
    /// <param name="cancellationToken">Cancels the enumeration.</param>
    /// <returns>The file's lines, read as they are enumerated.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    /// <exception cref="IOException">The file could not be opened (when the enumeration starts); see <see cref="ReadAllBytes(string)"/>.</exception>
    public static IAsyncEnumerable<string> ReadLinesAsync(string path, CancellationToken cancellationToken = default)
        => ReadLinesAsync(path, Encoding.UTF8, cancellationToken);

    /// <summary>
    /// Reads the lines of a file as an asynchronous sequence, as <see cref="File.ReadLinesAsync(string, Encoding, CancellationToken)"/>
    /// does: the open starts at once, asynchronously (on the ring where io_uring runs), and the lines are read on the
    /// default engine as they are enumerated; a second enumeration opens the file again. System.IO opens synchronously
    /// and throws the open's errors from this call; here they come from the first <c>MoveNextAsync</c>, which an
    /// <c>await foreach</c> over the call sees at the same statement. As in System.IO, the token does not cancel the open.
    /// </summary>
    /// <param name="path">The file to read; its open starts before this method returns.</param>
    /// <param name="encoding">The encoding of the text when the file has no byte order mark.</param>
    /// <param name="cancellationToken">Cancels the enumeration.</param>
    /// <returns>The file's lines, read as they are enumerated.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> or <paramref name="encoding"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    /// <exception cref="IOException">The file could not be opened (when the enumeration starts); see <see cref="ReadAllBytes(string)"/>.</exception>
    public static IAsyncEnumerable<string> ReadLinesAsync(string path, Encoding encoding, CancellationToken cancellationToken = default)
    {
        Validate(path, encoding);
        if (Portable.PassThrough.Enabled)
        {
            return File.ReadLinesAsync(path, encoding, cancellationToken);
        }
        // A task, not the open's ValueTask: a second enumeration looks at it again.
        return IterateLinesAsync(TextRead.OpenStreamAsync(path).AsTask(), path, encoding, cancellationToken);
    }

    private static async IAsyncEnumerable<string> IterateLinesAsync(Task<SpindleFileStream> open, string path, Encoding encoding,
        CancellationToken sequenceToken, [EnumeratorCancellation] CancellationToken enumeratorToken = default)
    {
        SpindleFileStream stream = await open.ConfigureAwait(false);
        if (!stream.CanRead)
        {
            // Enumerated before: the first enumeration closed the stream the call opened.
            stream = await TextRead.OpenStreamAsync(path).ConfigureAwait(false);
        }
        using var reader = TextRead.Reader(stream, encoding);
        using var both = CancellationTokenSource.CreateLinkedTokenSource(sequenceToken, enumeratorToken);
        while (await reader.ReadLineAsync(both.Token).ConfigureAwait(false) is string line)
        {
            yield return line;
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

    /// <summary>Opens (asynchronously) and writes the lines; errors of the open and the writes come through the task.</summary>
    private static Task WriteLinesAsync(string path, FileMode mode, IEnumerable<string> contents, Encoding encoding, CancellationToken cancellationToken)
    {
        if (cancellationToken.IsCancellationRequested)
        {
            return Task.FromCanceled(cancellationToken);
        }
        ValueTask<OpenedHandle> open;
        try
        {
            open = FileContent.OpenWriteAsync(path, mode, preallocationSize: 0, cancellationToken);
        }
        catch (Exception e)
        {
            return FileContent.FromException(e);
        }
        return open.IsCompletedSuccessfully
            ? WriteLinesAsync(open.Result.Handle, mode, contents, encoding, cancellationToken)
            : WriteLinesAfterOpenAsync(open, mode, contents, encoding, cancellationToken);
    }

    private static async Task WriteLinesAfterOpenAsync(ValueTask<OpenedHandle> open, FileMode mode, IEnumerable<string> contents, Encoding encoding,
        CancellationToken cancellationToken)
        => await WriteLinesAsync((await open.ConfigureAwait(false)).Handle, mode, contents, encoding, cancellationToken).ConfigureAwait(false);

    /// <summary>The writes of <see cref="WriteLinesAsync(string, FileMode, IEnumerable{string}, Encoding, CancellationToken)"/> once the file is open.</summary>
    private static Task WriteLinesAsync(SafeFileHandle handle, FileMode mode, IEnumerable<string> contents, Encoding encoding, CancellationToken cancellationToken)
    {
        long offset;
        try
        {
            offset = mode == FileMode.Append ? FileContent.AppendOffset(handle) : 0;
        }
        catch (Exception e)
        {
            handle.Dispose();
            return FileContent.FromException(e);
        }
        return TextWrite.WriteLinesAsync(handle, contents, encoding, offset, cancellationToken);
    }
}
