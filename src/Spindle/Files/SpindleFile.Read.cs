using System.Buffers;
using System.Runtime.ExceptionServices;
using System.Text;
using Microsoft.Win32.SafeHandles;
using Spindle.Files;
using Spindle.Handles;

namespace Spindle;

public static partial class SpindleFile
{
    // Cached so that passing them allocates nothing.
    private static readonly Func<ReadOnlySpan<byte>, Encoding, string> s_decodeText = TextDecoding.GetString;
    private static readonly Func<ReadOnlySpan<byte>, Encoding, string[]> s_decodeLines = TextDecoding.GetLines;
    private static readonly Func<StreamReader, string> s_readText = static reader => reader.ReadToEnd();
    private static readonly Func<StreamReader, string[]> s_readLines = TextRead.ReadLines;
    private static readonly Func<StreamReader, CancellationToken, Task<string>> s_readTextAsync = TextRead.ReadToEndAsync;
    private static readonly Func<StreamReader, CancellationToken, Task<string[]>> s_readLinesAsync = TextRead.ReadLinesAsync;

    /// <summary>
    /// Opens a file, reads all of it into a byte array and closes it, as <see cref="File.ReadAllBytes(string)"/> does:
    /// one open, one <c>fstat</c> for the length and the bytes read straight into the returned array. A file that
    /// reports a length of 0 (procfs) or has no positions (a pipe) is read until its end.
    /// </summary>
    /// <param name="path">The file to read.</param>
    /// <returns>The file's bytes.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty or contains a NUL character.</exception>
    /// <exception cref="FileNotFoundException">The file does not exist.</exception>
    /// <exception cref="DirectoryNotFoundException">A directory of the path does not exist.</exception>
    /// <exception cref="UnauthorizedAccessException">Access is denied, or the path is a directory.</exception>
    /// <exception cref="EndOfStreamException">The file became shorter than its length while it was read.</exception>
    /// <exception cref="IOException">The file is 2 GiB or longer, another handle holds it exclusively, or another I/O error occurred.</exception>
    public static byte[] ReadAllBytes(string path)
    {
        if (Portable.PassThrough.Enabled)
        {
            return File.ReadAllBytes(path);
        }
        using SafeFileHandle handle = FileContent.OpenRead(path, isAsync: false);
        long length = FileContent.LengthOf(handle);
        if (length > Array.MaxLength)
        {
            throw new IOException(FileContent.TooLongMessage);
        }
        if (length == 0)
        {
            byte[] pooled = FileContent.ReadToEndPooled(handle, out int count);
            try
            {
                return pooled.AsSpan(0, count).ToArray();
            }
            finally
            {
                ArrayPool<byte>.Shared.Return(pooled);
            }
        }
        byte[] bytes = GC.AllocateUninitializedArray<byte>((int)length);
        if (FileContent.Fill(handle, bytes) != bytes.Length)
        {
            throw new EndOfStreamException(FileContent.EndOfFileMessage);
        }
        return bytes;
    }

    /// <summary>
    /// Reads all of a file into a byte array asynchronously, as <see cref="File.ReadAllBytesAsync(string, CancellationToken)"/>
    /// does, with the open and the read on the default engine (io_uring, or the page-cache fast path that completes at once).
    /// The open is asynchronous too (<see cref="OpenHandleAsync(string, FileMode, FileAccess, FileShare, FileOptions, long, CancellationToken)"/>),
    /// so its errors come through the task, where System.IO, whose open is synchronous, throws them from the call.
    /// </summary>
    /// <param name="path">The file to read.</param>
    /// <param name="cancellationToken">Cancels the read.</param>
    /// <returns>The file's bytes.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty or contains a NUL character.</exception>
    /// <exception cref="FileNotFoundException">The file does not exist (through the task, as every error of the open and the read).</exception>
    /// <exception cref="DirectoryNotFoundException">A directory of the path does not exist.</exception>
    /// <exception cref="UnauthorizedAccessException">Access is denied, or the path is a directory.</exception>
    /// <exception cref="IOException">Another handle holds the file exclusively, the file is 2 GiB or longer, or the read failed.</exception>
    /// <exception cref="OperationCanceledException">The open or the read was cancelled.</exception>
    public static Task<byte[]> ReadAllBytesAsync(string path, CancellationToken cancellationToken = default)
    {
        if (Portable.PassThrough.Enabled)
        {
            return File.ReadAllBytesAsync(path, cancellationToken);
        }
        if (cancellationToken.IsCancellationRequested)
        {
            return Task.FromCanceled<byte[]>(cancellationToken);
        }
        ValueTask<OpenedHandle> open;
        try
        {
            open = FileContent.OpenReadAsync(path, cancellationToken);
        }
        catch (Exception e) when (e is not ArgumentException)
        {
            return FileContent.FromException<byte[]>(e);
        }
        return open.IsCompletedSuccessfully ? ReadAllBytesAsync(open.Result, cancellationToken) : ReadAllBytesAfterOpenAsync(open, cancellationToken);
    }

    private static async Task<byte[]> ReadAllBytesAfterOpenAsync(ValueTask<OpenedHandle> open, CancellationToken cancellationToken)
        => await ReadAllBytesAsync(await open.ConfigureAwait(false), cancellationToken).ConfigureAwait(false);

    /// <summary>The read of <see cref="ReadAllBytesAsync(string, CancellationToken)"/> once the file is open; completes at once when the bytes were cached.</summary>
    private static Task<byte[]> ReadAllBytesAsync(OpenedHandle opened, CancellationToken cancellationToken)
    {
        SafeFileHandle handle = opened.Handle;
        try
        {
            long length = FileContent.LengthOf(opened);
            if (length > Array.MaxLength)
            {
                handle.Dispose();
                return Task.FromException<byte[]>(ExceptionDispatchInfo.SetCurrentStackTrace(new IOException(FileContent.TooLongMessage)));
            }
            if (length == 0)
            {
                FileContent.PrepareForEngine(opened);
                return ReadAllBytesUnknownLengthAsync(handle, cancellationToken);
            }
            byte[] bytes = GC.AllocateUninitializedArray<byte>((int)length);
            int cached = FileContent.TryReadCached(opened, bytes, 0);
            if (cached == bytes.Length)
            {
                handle.Dispose();
                return Task.FromResult(bytes);
            }
            FileContent.PrepareForEngine(opened);
            ValueTask<int> first = cached > 0 ? new ValueTask<int>(cached) : SpindleRandomAccess.ReadAsync(handle, bytes, 0, cancellationToken);
            if (first.IsCompletedSuccessfully)
            {
                int count = first.Result;
                if (count == bytes.Length)
                {
                    handle.Dispose();
                    return Task.FromResult(bytes);
                }
                first = new ValueTask<int>(count);
            }
            return FinishReadAllBytesAsync(handle, bytes, first, cancellationToken);
        }
        catch (Exception e)
        {
            handle.Dispose();
            return FileContent.FromException<byte[]>(e);
        }
    }

    private static async Task<byte[]> FinishReadAllBytesAsync(SafeFileHandle handle, byte[] bytes, ValueTask<int> first, CancellationToken cancellationToken)
    {
        using (handle)
        {
            int count = await first.ConfigureAwait(false);
            if (count != 0 && count < bytes.Length)
            {
                count = await FileContent.FillAsync(handle, bytes, count, cancellationToken).ConfigureAwait(false);
            }
            if (count != bytes.Length)
            {
                throw new EndOfStreamException(FileContent.EndOfFileMessage);
            }
            return bytes;
        }
    }

    private static async Task<byte[]> ReadAllBytesUnknownLengthAsync(SafeFileHandle handle, CancellationToken cancellationToken)
    {
        using (handle)
        {
            (byte[] pooled, int count) = await FileContent.ReadToEndPooledAsync(handle, cancellationToken).ConfigureAwait(false);
            try
            {
                return pooled.AsSpan(0, count).ToArray();
            }
            finally
            {
                ArrayPool<byte>.Shared.Return(pooled);
            }
        }
    }

    /// <summary>Reads all the text of a UTF-8 file (or one whose byte order mark names another encoding), as <see cref="File.ReadAllText(string)"/> does.</summary>
    /// <param name="path">The file to read.</param>
    /// <returns>The file's text.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    /// <exception cref="IOException">The file could not be opened or read; see <see cref="ReadAllBytes(string)"/>.</exception>
    public static string ReadAllText(string path) => ReadAllText(path, Encoding.UTF8);

    /// <summary>
    /// Reads all the text of a file, as <see cref="File.ReadAllText(string, Encoding)"/> does, with
    /// <see cref="StreamReader"/>'s rules: the encoding's own preamble is skipped, else a UTF-8, UTF-16 or UTF-32
    /// byte order mark chooses the encoding. The whole file is read in one call and decoded straight into the string.
    /// </summary>
    /// <param name="path">The file to read.</param>
    /// <param name="encoding">The encoding of the text when the file has no byte order mark.</param>
    /// <returns>The file's text.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> or <paramref name="encoding"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    /// <exception cref="IOException">The file could not be opened or read; see <see cref="ReadAllBytes(string)"/>.</exception>
    public static string ReadAllText(string path, Encoding encoding)
    {
        Validate(path, encoding);
        if (Portable.PassThrough.Enabled)
        {
            return File.ReadAllText(path, encoding);
        }
        return TextRead.Read(FileContent.OpenRead(path, isAsync: false), encoding, s_decodeText, s_readText);
    }

    /// <summary>Reads all the text of a UTF-8 file asynchronously, as <see cref="File.ReadAllTextAsync(string, CancellationToken)"/> does.</summary>
    /// <param name="path">The file to read.</param>
    /// <param name="cancellationToken">Cancels the read.</param>
    /// <returns>The file's text; errors of the open and the read come through the task.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    public static Task<string> ReadAllTextAsync(string path, CancellationToken cancellationToken = default)
        => ReadAllTextAsync(path, Encoding.UTF8, cancellationToken);

    /// <summary>
    /// Reads all the text of a file asynchronously, as <see cref="File.ReadAllTextAsync(string, Encoding, CancellationToken)"/>
    /// does (the rules of <see cref="ReadAllText(string, Encoding)"/>), with the read on the default engine.
    /// </summary>
    /// <param name="path">The file to read.</param>
    /// <param name="encoding">The encoding of the text when the file has no byte order mark.</param>
    /// <param name="cancellationToken">Cancels the read.</param>
    /// <returns>The file's text; errors of the open and the read come through the task.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> or <paramref name="encoding"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    public static Task<string> ReadAllTextAsync(string path, Encoding encoding, CancellationToken cancellationToken = default)
    {
        Validate(path, encoding);
        if (Portable.PassThrough.Enabled)
        {
            return File.ReadAllTextAsync(path, encoding, cancellationToken);
        }
        return cancellationToken.IsCancellationRequested
            ? Task.FromCanceled<string>(cancellationToken)
            : TextRead.ReadAsync(path, encoding, s_decodeText, s_readTextAsync, cancellationToken);
    }

    /// <summary>Reads the lines of a UTF-8 file, as <see cref="File.ReadAllLines(string)"/> does.</summary>
    /// <param name="path">The file to read.</param>
    /// <returns>The file's lines, without their terminators.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    /// <exception cref="IOException">The file could not be opened or read; see <see cref="ReadAllBytes(string)"/>.</exception>
    public static string[] ReadAllLines(string path) => ReadAllLines(path, Encoding.UTF8);

    /// <summary>
    /// Reads the lines of a file, as <see cref="File.ReadAllLines(string, Encoding)"/> does: split at <c>\r</c>,
    /// <c>\n</c> and <c>\r\n</c>, with the encoding rules of <see cref="ReadAllText(string, Encoding)"/>.
    /// </summary>
    /// <param name="path">The file to read.</param>
    /// <param name="encoding">The encoding of the text when the file has no byte order mark.</param>
    /// <returns>The file's lines, without their terminators.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> or <paramref name="encoding"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    /// <exception cref="IOException">The file could not be opened or read; see <see cref="ReadAllBytes(string)"/>.</exception>
    public static string[] ReadAllLines(string path, Encoding encoding)
    {
        Validate(path, encoding);
        if (Portable.PassThrough.Enabled)
        {
            return File.ReadAllLines(path, encoding);
        }
        return TextRead.Read(FileContent.OpenRead(path, isAsync: false), encoding, s_decodeLines, s_readLines);
    }

    /// <summary>Reads the lines of a UTF-8 file asynchronously, as <see cref="File.ReadAllLinesAsync(string, CancellationToken)"/> does.</summary>
    /// <param name="path">The file to read.</param>
    /// <param name="cancellationToken">Cancels the read.</param>
    /// <returns>The file's lines; errors of the open and the read come through the task.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    public static Task<string[]> ReadAllLinesAsync(string path, CancellationToken cancellationToken = default)
        => ReadAllLinesAsync(path, Encoding.UTF8, cancellationToken);

    /// <summary>Reads the lines of a file asynchronously, as <see cref="File.ReadAllLinesAsync(string, Encoding, CancellationToken)"/> does.</summary>
    /// <param name="path">The file to read.</param>
    /// <param name="encoding">The encoding of the text when the file has no byte order mark.</param>
    /// <param name="cancellationToken">Cancels the read.</param>
    /// <returns>The file's lines; errors of the open and the read come through the task.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> or <paramref name="encoding"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    public static Task<string[]> ReadAllLinesAsync(string path, Encoding encoding, CancellationToken cancellationToken = default)
    {
        Validate(path, encoding);
        if (Portable.PassThrough.Enabled)
        {
            return File.ReadAllLinesAsync(path, encoding, cancellationToken);
        }
        return cancellationToken.IsCancellationRequested
            ? Task.FromCanceled<string[]>(cancellationToken)
            : TextRead.ReadAsync(path, encoding, s_decodeLines, s_readLinesAsync, cancellationToken);
    }

    /// <summary>System.IO's argument checks for the text methods, in its order.</summary>
    private static void Validate(string path, Encoding encoding)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        ArgumentNullException.ThrowIfNull(encoding);
    }
}
