using System.Buffers;
using System.Text;
using Microsoft.Win32.SafeHandles;
using Spindle.Files;
using Spindle.Handles;

namespace Spindle;

public static partial class SpindleFile
{
    /// <summary>
    /// Creates or overwrites a file with the given bytes, as <see cref="File.WriteAllBytes(string, byte[])"/> does:
    /// one open (others may read), one write.
    /// </summary>
    /// <param name="path">The file to write.</param>
    /// <param name="bytes">The file's new contents.</param>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> or <paramref name="bytes"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty or contains a NUL character.</exception>
    /// <exception cref="DirectoryNotFoundException">A directory of the path does not exist.</exception>
    /// <exception cref="UnauthorizedAccessException">Access is denied, or the path is a directory.</exception>
    /// <exception cref="IOException">Another handle holds the file, the disk is full, or another I/O error occurred.</exception>
    public static void WriteAllBytes(string path, byte[] bytes)
    {
        ArgumentNullException.ThrowIfNull(bytes);
        WriteAllBytes(path, new ReadOnlySpan<byte>(bytes));
    }

    /// <summary>Creates or overwrites a file with the given bytes, as <see cref="File.WriteAllBytes(string, ReadOnlySpan{byte})"/> does.</summary>
    /// <param name="path">The file to write.</param>
    /// <param name="bytes">The file's new contents.</param>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty or contains a NUL character.</exception>
    /// <exception cref="IOException">The file could not be opened or written; see <see cref="WriteAllBytes(string, byte[])"/>.</exception>
    public static void WriteAllBytes(string path, ReadOnlySpan<byte> bytes)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        if (Portable.PassThrough.Enabled)
        {
            File.WriteAllBytes(path, bytes);
            return;
        }
        using SafeFileHandle handle = OpenHandle(path, FileMode.Create, FileAccess.Write, FileShare.Read);
        FileContent.Write(handle, bytes, 0);
    }

    /// <summary>Creates or overwrites a file with the given bytes asynchronously, as <see cref="File.WriteAllBytesAsync(string, byte[], CancellationToken)"/> does.</summary>
    /// <param name="path">The file to write.</param>
    /// <param name="bytes">The file's new contents.</param>
    /// <param name="cancellationToken">Cancels the write.</param>
    /// <returns>A task that completes when the bytes are written; errors of the open and the write come through it.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> or <paramref name="bytes"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    public static Task WriteAllBytesAsync(string path, byte[] bytes, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(bytes);
        return WriteAllBytesAsync(path, new ReadOnlyMemory<byte>(bytes), cancellationToken);
    }

    /// <summary>
    /// Creates or overwrites a file with the given bytes asynchronously, as
    /// <see cref="File.WriteAllBytesAsync(string, ReadOnlyMemory{byte}, CancellationToken)"/> does, with the write on
    /// the default engine. The file is opened on the calling thread, as in System.IO.
    /// </summary>
    /// <param name="path">The file to write.</param>
    /// <param name="bytes">The file's new contents; they must not change until the task completes.</param>
    /// <param name="cancellationToken">Cancels the write.</param>
    /// <returns>A task that completes when the bytes are written; errors of the open and the write come through it.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    public static Task WriteAllBytesAsync(string path, ReadOnlyMemory<byte> bytes, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        if (Portable.PassThrough.Enabled)
        {
            return File.WriteAllBytesAsync(path, bytes, cancellationToken);
        }
        return cancellationToken.IsCancellationRequested
            ? Task.FromCanceled(cancellationToken)
            : WriteBytesAsync(path, FileMode.Create, bytes, cancellationToken);
    }

    /// <summary>Appends bytes to a file, creating it if needed, as <see cref="File.AppendAllBytes(string, byte[])"/> does.</summary>
    /// <param name="path">The file to append to.</param>
    /// <param name="bytes">The bytes to append.</param>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> or <paramref name="bytes"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    /// <exception cref="IOException">The file could not be opened or written; see <see cref="WriteAllBytes(string, byte[])"/>.</exception>
    public static void AppendAllBytes(string path, byte[] bytes)
    {
        ArgumentNullException.ThrowIfNull(bytes);
        AppendAllBytes(path, new ReadOnlySpan<byte>(bytes));
    }

    /// <summary>Appends bytes to a file, creating it if needed, as <see cref="File.AppendAllBytes(string, ReadOnlySpan{byte})"/> does.</summary>
    /// <param name="path">The file to append to.</param>
    /// <param name="bytes">The bytes to append.</param>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    /// <exception cref="IOException">The file could not be opened or written; see <see cref="WriteAllBytes(string, byte[])"/>.</exception>
    public static void AppendAllBytes(string path, ReadOnlySpan<byte> bytes)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        if (Portable.PassThrough.Enabled)
        {
            File.AppendAllBytes(path, bytes);
            return;
        }
        using SafeFileHandle handle = OpenHandle(path, FileMode.Append, FileAccess.Write, FileShare.Read);
        FileContent.Write(handle, bytes, SpindleRandomAccess.GetLength(handle));
    }

    /// <summary>Appends bytes to a file asynchronously, as <see cref="File.AppendAllBytesAsync(string, byte[], CancellationToken)"/> does.</summary>
    /// <param name="path">The file to append to.</param>
    /// <param name="bytes">The bytes to append.</param>
    /// <param name="cancellationToken">Cancels the write.</param>
    /// <returns>A task that completes when the bytes are written; errors of the open and the write come through it.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> or <paramref name="bytes"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    public static Task AppendAllBytesAsync(string path, byte[] bytes, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(bytes);
        return AppendAllBytesAsync(path, new ReadOnlyMemory<byte>(bytes), cancellationToken);
    }

    /// <summary>Appends bytes to a file asynchronously, as <see cref="File.AppendAllBytesAsync(string, ReadOnlyMemory{byte}, CancellationToken)"/> does.</summary>
    /// <param name="path">The file to append to.</param>
    /// <param name="bytes">The bytes to append; they must not change until the task completes.</param>
    /// <param name="cancellationToken">Cancels the write.</param>
    /// <returns>A task that completes when the bytes are written; errors of the open and the write come through it.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    public static Task AppendAllBytesAsync(string path, ReadOnlyMemory<byte> bytes, CancellationToken cancellationToken = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        if (Portable.PassThrough.Enabled)
        {
            return File.AppendAllBytesAsync(path, bytes, cancellationToken);
        }
        return cancellationToken.IsCancellationRequested
            ? Task.FromCanceled(cancellationToken)
            : WriteBytesAsync(path, FileMode.Append, bytes, cancellationToken);
    }

    /// <summary>Opens (asynchronously), starts the one write and completes at once when the engine did; errors come through the task.</summary>
    private static Task WriteBytesAsync(string path, FileMode mode, ReadOnlyMemory<byte> bytes, CancellationToken cancellationToken)
    {
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
            ? WriteBytesAsync(open.Result, mode, bytes, cancellationToken)
            : WriteBytesAfterOpenAsync(open, mode, bytes, cancellationToken);
    }

    private static async Task WriteBytesAfterOpenAsync(ValueTask<OpenedHandle> open, FileMode mode, ReadOnlyMemory<byte> bytes, CancellationToken cancellationToken)
        => await WriteBytesAsync(await open.ConfigureAwait(false), mode, bytes, cancellationToken).ConfigureAwait(false);

    /// <summary>The write of <see cref="WriteBytesAsync(string, FileMode, ReadOnlyMemory{byte}, CancellationToken)"/> once the file is open.</summary>
    private static Task WriteBytesAsync(OpenedHandle opened, FileMode mode, ReadOnlyMemory<byte> bytes, CancellationToken cancellationToken)
    {
        SafeFileHandle handle = opened.Handle;
        bool inline = FileContent.WritesInline(opened.Opened);
        try
        {
            long offset = mode == FileMode.Append ? SpindleRandomAccess.GetLength(handle) : 0;
            if (FileContent.IsInline(inline, bytes.Length))
            {
                // A page-cache copy: done here, as the engines do small writes to such files.
                FileContent.Write(handle, bytes.Span, offset);
                handle.Dispose();
                return Task.CompletedTask;
            }
            ValueTask write = SpindleRandomAccess.WriteAsync(handle, bytes, offset, cancellationToken);
            if (write.IsCompletedSuccessfully)
            {
                handle.Dispose();
                return Task.CompletedTask;
            }
            return FinishWriteAsync(handle, write, buffer: null);
        }
        catch (Exception e)
        {
            handle.Dispose();
            return FileContent.FromException(e);
        }
    }

    /// <summary>Waits for a write, then closes the handle and returns the pooled buffer, if any.</summary>
    private static async Task FinishWriteAsync(SafeFileHandle handle, ValueTask write, byte[]? buffer)
    {
        try
        {
            await write.ConfigureAwait(false);
        }
        finally
        {
            handle.Dispose();
            if (buffer is not null)
            {
                ArrayPool<byte>.Shared.Return(buffer);
            }
        }
    }

    /// <summary>Creates or overwrites a file with UTF-8 text (no byte order mark), as <see cref="File.WriteAllText(string, string)"/> does.</summary>
    /// <param name="path">The file to write.</param>
    /// <param name="contents">The text; null writes an empty file.</param>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    /// <exception cref="EncoderFallbackException">The text holds an unpaired surrogate.</exception>
    /// <exception cref="IOException">The file could not be opened or written; see <see cref="WriteAllBytes(string, byte[])"/>.</exception>
    public static void WriteAllText(string path, string? contents) => WriteAllText(path, contents.AsSpan(), TextWrite.UTF8NoBOM);

    /// <summary>Creates or overwrites a file with UTF-8 text (no byte order mark), as <see cref="File.WriteAllText(string, ReadOnlySpan{char})"/> does.</summary>
    /// <param name="path">The file to write.</param>
    /// <param name="contents">The text.</param>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    /// <exception cref="IOException">The file could not be opened or written; see <see cref="WriteAllBytes(string, byte[])"/>.</exception>
    public static void WriteAllText(string path, ReadOnlySpan<char> contents) => WriteAllText(path, contents, TextWrite.UTF8NoBOM);

    /// <summary>
    /// Creates or overwrites a file with text, as <see cref="File.WriteAllText(string, string, Encoding)"/> does: the
    /// encoding's preamble, then the text, encoded into one pooled buffer and written with one call.
    /// </summary>
    /// <param name="path">The file to write.</param>
    /// <param name="contents">The text; null writes only the preamble.</param>
    /// <param name="encoding">The encoding of the text.</param>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> or <paramref name="encoding"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    /// <exception cref="IOException">The file could not be opened or written; see <see cref="WriteAllBytes(string, byte[])"/>.</exception>
    public static void WriteAllText(string path, string? contents, Encoding encoding) => WriteAllText(path, contents.AsSpan(), encoding);

    /// <summary>Creates or overwrites a file with text, as <see cref="File.WriteAllText(string, ReadOnlySpan{char}, Encoding)"/> does.</summary>
    /// <param name="path">The file to write.</param>
    /// <param name="contents">The text.</param>
    /// <param name="encoding">The encoding of the text.</param>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> or <paramref name="encoding"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    /// <exception cref="IOException">The file could not be opened or written; see <see cref="WriteAllBytes(string, byte[])"/>.</exception>
    public static void WriteAllText(string path, ReadOnlySpan<char> contents, Encoding encoding)
    {
        Validate(path, encoding);
        if (Portable.PassThrough.Enabled)
        {
            File.WriteAllText(path, contents, encoding);
            return;
        }
        WriteText(path, FileMode.Create, contents, encoding);
    }

    /// <summary>Appends UTF-8 text to a file, creating it if needed, as <see cref="File.AppendAllText(string, string)"/> does.</summary>
    /// <param name="path">The file to append to.</param>
    /// <param name="contents">The text.</param>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    /// <exception cref="IOException">The file could not be opened or written; see <see cref="WriteAllBytes(string, byte[])"/>.</exception>
    public static void AppendAllText(string path, string? contents) => AppendAllText(path, contents.AsSpan(), TextWrite.UTF8NoBOM);

    /// <summary>Appends UTF-8 text to a file, as <see cref="File.AppendAllText(string, ReadOnlySpan{char})"/> does.</summary>
    /// <param name="path">The file to append to.</param>
    /// <param name="contents">The text.</param>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    /// <exception cref="IOException">The file could not be opened or written; see <see cref="WriteAllBytes(string, byte[])"/>.</exception>
    public static void AppendAllText(string path, ReadOnlySpan<char> contents) => AppendAllText(path, contents, TextWrite.UTF8NoBOM);

    /// <summary>
    /// Appends text to a file, creating it if needed, as <see cref="File.AppendAllText(string, string, Encoding)"/> does:
    /// the preamble only when the file is empty.
    /// </summary>
    /// <param name="path">The file to append to.</param>
    /// <param name="contents">The text.</param>
    /// <param name="encoding">The encoding of the text.</param>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> or <paramref name="encoding"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    /// <exception cref="IOException">The file could not be opened or written; see <see cref="WriteAllBytes(string, byte[])"/>.</exception>
    public static void AppendAllText(string path, string? contents, Encoding encoding) => AppendAllText(path, contents.AsSpan(), encoding);

    /// <summary>Appends text to a file, as <see cref="File.AppendAllText(string, ReadOnlySpan{char}, Encoding)"/> does.</summary>
    /// <param name="path">The file to append to.</param>
    /// <param name="contents">The text.</param>
    /// <param name="encoding">The encoding of the text.</param>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> or <paramref name="encoding"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    /// <exception cref="IOException">The file could not be opened or written; see <see cref="WriteAllBytes(string, byte[])"/>.</exception>
    public static void AppendAllText(string path, ReadOnlySpan<char> contents, Encoding encoding)
    {
        Validate(path, encoding);
        if (Portable.PassThrough.Enabled)
        {
            File.AppendAllText(path, contents, encoding);
            return;
        }
        WriteText(path, FileMode.Append, contents, encoding);
    }

    private static void WriteText(string path, FileMode mode, ReadOnlySpan<char> contents, Encoding encoding)
    {
        using SafeFileHandle handle = OpenHandle(path, mode, FileAccess.Write, FileShare.Read, FileOptions.None,
            TextWrite.PreallocationSize(mode, contents, encoding, encoding.Preamble.Length));
        long offset = mode == FileMode.Append ? FileContent.AppendOffset(handle) : 0;
        byte[]? buffer = TextWrite.Encode(handle, contents, encoding, offset, out int count);
        if (buffer is not null)
        {
            try
            {
                FileContent.Write(handle, buffer.AsSpan(0, count), offset);
            }
            finally
            {
                ArrayPool<byte>.Shared.Return(buffer);
            }
        }
    }

    /// <summary>Creates or overwrites a file with UTF-8 text asynchronously, as <see cref="File.WriteAllTextAsync(string, string, CancellationToken)"/> does.</summary>
    /// <param name="path">The file to write.</param>
    /// <param name="contents">The text.</param>
    /// <param name="cancellationToken">Cancels the write.</param>
    /// <returns>A task that completes when the text is written; errors of the open and the write come through it.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    public static Task WriteAllTextAsync(string path, string? contents, CancellationToken cancellationToken = default)
        => WriteAllTextAsync(path, contents.AsMemory(), TextWrite.UTF8NoBOM, cancellationToken);

    /// <summary>Creates or overwrites a file with UTF-8 text asynchronously, as <see cref="File.WriteAllTextAsync(string, ReadOnlyMemory{char}, CancellationToken)"/> does.</summary>
    /// <param name="path">The file to write.</param>
    /// <param name="contents">The text.</param>
    /// <param name="cancellationToken">Cancels the write.</param>
    /// <returns>A task that completes when the text is written; errors of the open and the write come through it.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    public static Task WriteAllTextAsync(string path, ReadOnlyMemory<char> contents, CancellationToken cancellationToken = default)
        => WriteAllTextAsync(path, contents, TextWrite.UTF8NoBOM, cancellationToken);

    /// <summary>Creates or overwrites a file with text asynchronously, as <see cref="File.WriteAllTextAsync(string, string, Encoding, CancellationToken)"/> does.</summary>
    /// <param name="path">The file to write.</param>
    /// <param name="contents">The text.</param>
    /// <param name="encoding">The encoding of the text.</param>
    /// <param name="cancellationToken">Cancels the write.</param>
    /// <returns>A task that completes when the text is written; errors of the open and the write come through it.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> or <paramref name="encoding"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    public static Task WriteAllTextAsync(string path, string? contents, Encoding encoding, CancellationToken cancellationToken = default)
        => WriteAllTextAsync(path, contents.AsMemory(), encoding, cancellationToken);

    /// <summary>
    /// Creates or overwrites a file with text asynchronously, as
    /// <see cref="File.WriteAllTextAsync(string, ReadOnlyMemory{char}, Encoding, CancellationToken)"/> does: encoded
    /// into one pooled buffer, written with one call on the default engine.
    /// </summary>
    /// <param name="path">The file to write.</param>
    /// <param name="contents">The text.</param>
    /// <param name="encoding">The encoding of the text.</param>
    /// <param name="cancellationToken">Cancels the write.</param>
    /// <returns>A task that completes when the text is written; errors of the open and the write come through it.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> or <paramref name="encoding"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    public static Task WriteAllTextAsync(string path, ReadOnlyMemory<char> contents, Encoding encoding, CancellationToken cancellationToken = default)
    {
        Validate(path, encoding);
        if (Portable.PassThrough.Enabled)
        {
            return File.WriteAllTextAsync(path, contents, encoding, cancellationToken);
        }
        return cancellationToken.IsCancellationRequested
            ? Task.FromCanceled(cancellationToken)
            : WriteTextAsync(path, FileMode.Create, contents, encoding, cancellationToken);
    }

    /// <summary>Appends UTF-8 text to a file asynchronously, as <see cref="File.AppendAllTextAsync(string, string, CancellationToken)"/> does.</summary>
    /// <param name="path">The file to append to.</param>
    /// <param name="contents">The text.</param>
    /// <param name="cancellationToken">Cancels the write.</param>
    /// <returns>A task that completes when the text is written; errors of the open and the write come through it.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    public static Task AppendAllTextAsync(string path, string? contents, CancellationToken cancellationToken = default)
        => AppendAllTextAsync(path, contents.AsMemory(), TextWrite.UTF8NoBOM, cancellationToken);

    /// <summary>Appends UTF-8 text to a file asynchronously, as <see cref="File.AppendAllTextAsync(string, ReadOnlyMemory{char}, CancellationToken)"/> does.</summary>
    /// <param name="path">The file to append to.</param>
    /// <param name="contents">The text.</param>
    /// <param name="cancellationToken">Cancels the write.</param>
    /// <returns>A task that completes when the text is written; errors of the open and the write come through it.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    public static Task AppendAllTextAsync(string path, ReadOnlyMemory<char> contents, CancellationToken cancellationToken = default)
        => AppendAllTextAsync(path, contents, TextWrite.UTF8NoBOM, cancellationToken);

    /// <summary>Appends text to a file asynchronously, as <see cref="File.AppendAllTextAsync(string, string, Encoding, CancellationToken)"/> does.</summary>
    /// <param name="path">The file to append to.</param>
    /// <param name="contents">The text.</param>
    /// <param name="encoding">The encoding of the text.</param>
    /// <param name="cancellationToken">Cancels the write.</param>
    /// <returns>A task that completes when the text is written; errors of the open and the write come through it.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> or <paramref name="encoding"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    public static Task AppendAllTextAsync(string path, string? contents, Encoding encoding, CancellationToken cancellationToken = default)
        => AppendAllTextAsync(path, contents.AsMemory(), encoding, cancellationToken);

    /// <summary>Appends text to a file asynchronously, as <see cref="File.AppendAllTextAsync(string, ReadOnlyMemory{char}, Encoding, CancellationToken)"/> does.</summary>
    /// <param name="path">The file to append to.</param>
    /// <param name="contents">The text.</param>
    /// <param name="encoding">The encoding of the text.</param>
    /// <param name="cancellationToken">Cancels the write.</param>
    /// <returns>A task that completes when the text is written; errors of the open and the write come through it.</returns>
    /// <exception cref="ArgumentNullException"><paramref name="path"/> or <paramref name="encoding"/> is null.</exception>
    /// <exception cref="ArgumentException"><paramref name="path"/> is empty.</exception>
    public static Task AppendAllTextAsync(string path, ReadOnlyMemory<char> contents, Encoding encoding, CancellationToken cancellationToken = default)
    {
        Validate(path, encoding);
        if (Portable.PassThrough.Enabled)
        {
            return File.AppendAllTextAsync(path, contents, encoding, cancellationToken);
        }
        return cancellationToken.IsCancellationRequested
            ? Task.FromCanceled(cancellationToken)
            : WriteTextAsync(path, FileMode.Append, contents, encoding, cancellationToken);
    }

    /// <summary>Opens (asynchronously), encodes and starts the one write; completes at once when the engine did; errors come through the task.</summary>
    private static Task WriteTextAsync(string path, FileMode mode, ReadOnlyMemory<char> contents, Encoding encoding, CancellationToken cancellationToken)
    {
        ValueTask<OpenedHandle> open;
        try
        {
            open = FileContent.OpenWriteAsync(path, mode, TextWrite.PreallocationSize(mode, contents.Span, encoding, encoding.Preamble.Length), cancellationToken);
        }
        catch (Exception e)
        {
            return FileContent.FromException(e);
        }
        return open.IsCompletedSuccessfully
            ? WriteTextAsync(open.Result, mode, contents, encoding, cancellationToken)
            : WriteTextAfterOpenAsync(open, mode, contents, encoding, cancellationToken);
    }

    private static async Task WriteTextAfterOpenAsync(ValueTask<OpenedHandle> open, FileMode mode, ReadOnlyMemory<char> contents, Encoding encoding,
        CancellationToken cancellationToken)
        => await WriteTextAsync(await open.ConfigureAwait(false), mode, contents, encoding, cancellationToken).ConfigureAwait(false);

    /// <summary>The encoding and write of <see cref="WriteTextAsync(string, FileMode, ReadOnlyMemory{char}, Encoding, CancellationToken)"/> once the file is open.</summary>
    private static Task WriteTextAsync(OpenedHandle opened, FileMode mode, ReadOnlyMemory<char> contents, Encoding encoding, CancellationToken cancellationToken)
    {
        SafeFileHandle handle = opened.Handle;
        bool inline = FileContent.WritesInline(opened.Opened);
        byte[]? buffer = null;
        try
        {
            long offset = mode == FileMode.Append ? FileContent.AppendOffset(handle) : 0;
            buffer = TextWrite.Encode(handle, contents.Span, encoding, offset, out int count);
            if (buffer is null || count == 0)
            {
                handle.Dispose();
                if (buffer is not null)
                {
                    ArrayPool<byte>.Shared.Return(buffer);
                }
                return Task.CompletedTask;
            }
            if (FileContent.IsInline(inline, count))
            {
                FileContent.Write(handle, buffer.AsSpan(0, count), offset);
                handle.Dispose();
                ArrayPool<byte>.Shared.Return(buffer);
                return Task.CompletedTask;
            }
            ValueTask write = SpindleRandomAccess.WriteAsync(handle, buffer.AsMemory(0, count), offset, cancellationToken);
            if (write.IsCompletedSuccessfully)
            {
                handle.Dispose();
                ArrayPool<byte>.Shared.Return(buffer);
                return Task.CompletedTask;
            }
            return FinishWriteAsync(handle, write, buffer);
        }
        catch (Exception e)
        {
            handle.Dispose();
            if (buffer is not null)
            {
                ArrayPool<byte>.Shared.Return(buffer);
            }
            return FileContent.FromException(e);
        }
    }
}
