using System.Buffers;
using System.Text;
using Microsoft.Win32.SafeHandles;
using Spindle.Handles;

namespace Spindle.Files;

/// <summary>
/// The text reads behind <see cref="SpindleFile.ReadAllText(string, Encoding)"/> and
/// <see cref="SpindleFile.ReadAllLines(string, Encoding)"/>: a file up to <see cref="FileContent.MaxWholeTextLength"/>
/// is read whole into one pooled buffer and decoded at once; a longer one goes through a <see cref="StreamReader"/>
/// on a Spindle stream over the same handle, as System.IO reads every file.
/// </summary>
internal static class TextRead
{
    private const int ReaderBufferSize = 4096; // StreamReader's and FileStream's default, as System.IO uses them

    /// <summary>Reads the file of <paramref name="handle"/>, which this disposes, and decodes it with <paramref name="decode"/> or <paramref name="read"/>.</summary>
    internal static T Read<T>(SafeFileHandle handle, Encoding encoding, Func<ReadOnlySpan<byte>, Encoding, T> decode, Func<StreamReader, T> read)
    {
        using (handle)
        {
            long length = FileContent.LengthOf(handle);
            if (length > FileContent.MaxWholeTextLength)
            {
                using var reader = Reader(handle, encoding);
                return read(reader);
            }
            byte[] buffer;
            int count;
            if (length == 0)
            {
                buffer = FileContent.ReadToEndPooled(handle, out count);
            }
            else
            {
                buffer = ArrayPool<byte>.Shared.Rent((int)length);
                try
                {
                    count = FileContent.Fill(handle, buffer.AsSpan(0, (int)length));
                }
                catch
                {
                    ArrayPool<byte>.Shared.Return(buffer);
                    throw;
                }
            }
            try
            {
                return decode(buffer.AsSpan(0, count), encoding);
            }
            finally
            {
                ArrayPool<byte>.Shared.Return(buffer);
            }
        }
    }

    /// <summary>
    /// As <see cref="Read{T}"/>, asynchronously: opens (on the ring where io_uring runs) and starts the read;
    /// a read that completes at once is decoded without an asynchronous method. Errors come through the task.
    /// </summary>
    internal static Task<T> ReadAsync<T>(string path, Encoding encoding, Func<ReadOnlySpan<byte>, Encoding, T> decode,
        Func<StreamReader, CancellationToken, Task<T>> read, CancellationToken cancellationToken)
    {
        ValueTask<OpenedHandle> open;
        try
        {
            open = FileContent.OpenReadAsync(path, cancellationToken);
        }
        catch (Exception e)
        {
            return FileContent.FromException<T>(e);
        }
        return open.IsCompletedSuccessfully
            ? ReadAsync(open.Result, encoding, decode, read, cancellationToken)
            : ReadAfterOpenAsync(open, encoding, decode, read, cancellationToken);
    }

    private static async Task<T> ReadAfterOpenAsync<T>(ValueTask<OpenedHandle> open, Encoding encoding, Func<ReadOnlySpan<byte>, Encoding, T> decode,
        Func<StreamReader, CancellationToken, Task<T>> read, CancellationToken cancellationToken)
        => await ReadAsync(await open.ConfigureAwait(false), encoding, decode, read, cancellationToken).ConfigureAwait(false);

    /// <summary>The read of <see cref="ReadAsync{T}(string, Encoding, Func{ReadOnlySpan{byte}, Encoding, T}, Func{StreamReader, CancellationToken, Task{T}}, CancellationToken)"/> once the file is open.</summary>
    private static Task<T> ReadAsync<T>(OpenedHandle opened, Encoding encoding, Func<ReadOnlySpan<byte>, Encoding, T> decode,
        Func<StreamReader, CancellationToken, Task<T>> read, CancellationToken cancellationToken)
    {
        SafeFileHandle handle = opened.Handle;
        byte[]? buffer = null;
        try
        {
            long length = FileContent.LengthOf(opened);
            if (length > FileContent.MaxWholeTextLength)
            {
                FileContent.PrepareForEngine(opened);
                return ReadThroughReaderAsync(Reader(handle, encoding), read, cancellationToken);
            }
            if (length == 0)
            {
                FileContent.PrepareForEngine(opened);
                return ReadUnknownLengthAsync(handle, encoding, decode, cancellationToken);
            }
            buffer = ArrayPool<byte>.Shared.Rent((int)length);
            int cached = FileContent.TryReadCached(opened, buffer.AsSpan(0, (int)length), 0);
            if (cached != length)
            {
                FileContent.PrepareForEngine(opened);
            }
            ValueTask<int> first = cached >= 0 ? new ValueTask<int>(cached) : SpindleRandomAccess.ReadAsync(handle, buffer.AsMemory(0, (int)length), 0, cancellationToken);
            if (first.IsCompletedSuccessfully)
            {
                int count = first.Result;
                if (count == length || count == 0)
                {
                    T result = decode(buffer.AsSpan(0, count), encoding);
                    handle.Dispose();
                    ArrayPool<byte>.Shared.Return(buffer);
                    return Task.FromResult(result);
                }
                first = new ValueTask<int>(count);
            }
            return FinishAsync(handle, buffer, (int)length, first, encoding, decode, cancellationToken);
        }
        catch (Exception e)
        {
            handle.Dispose();
            if (buffer is not null)
            {
                ArrayPool<byte>.Shared.Return(buffer);
            }
            return FileContent.FromException<T>(e);
        }
    }

    private static async Task<T> FinishAsync<T>(SafeFileHandle handle, byte[] buffer, int length, ValueTask<int> first, Encoding encoding,
        Func<ReadOnlySpan<byte>, Encoding, T> decode, CancellationToken cancellationToken)
    {
        try
        {
            int count = await first.ConfigureAwait(false);
            if (count != 0 && count < length)
            {
                count = await FileContent.FillAsync(handle, buffer.AsMemory(0, length), count, cancellationToken).ConfigureAwait(false);
            }
            return decode(buffer.AsSpan(0, count), encoding);
        }
        finally
        {
            handle.Dispose();
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    private static async Task<T> ReadUnknownLengthAsync<T>(SafeFileHandle handle, Encoding encoding, Func<ReadOnlySpan<byte>, Encoding, T> decode,
        CancellationToken cancellationToken)
    {
        using (handle)
        {
            (byte[] buffer, int count) = await FileContent.ReadToEndPooledAsync(handle, cancellationToken).ConfigureAwait(false);
            try
            {
                return decode(buffer.AsSpan(0, count), encoding);
            }
            finally
            {
                ArrayPool<byte>.Shared.Return(buffer);
            }
        }
    }

    private static async Task<T> ReadThroughReaderAsync<T>(StreamReader reader, Func<StreamReader, CancellationToken, Task<T>> read, CancellationToken cancellationToken)
    {
        using (reader)
        {
            return await read(reader, cancellationToken).ConfigureAwait(false);
        }
    }

    /// <summary>A reader on a Spindle stream that owns <paramref name="handle"/>, with System.IO's buffer sizes and mark detection.</summary>
    internal static StreamReader Reader(SafeFileHandle handle, Encoding encoding)
        => Reader(new SpindleFileStream(handle, FileAccess.Read, ReaderBufferSize), encoding);

    /// <summary>A reader that owns <paramref name="stream"/>, with System.IO's buffer size and mark detection.</summary>
    internal static StreamReader Reader(SpindleFileStream stream, Encoding encoding)
        => new(stream, encoding, detectEncodingFromByteOrderMarks: true, ReaderBufferSize);

    /// <summary>
    /// The stream System.IO's asynchronous line reads open (asynchronous, sequential, others may read), opened
    /// asynchronously on the default engine; the open is not cancellable, as System.IO's is not.
    /// </summary>
    internal static ValueTask<SpindleFileStream> OpenStreamAsync(string path)
        => SpindleFileStream.OpenAsync(path, s_asyncReaderOptions, CancellationToken.None);

    /// <summary>A reader that opens <paramref name="path"/> as System.IO's synchronous line reads do.</summary>
    internal static StreamReader OpenReader(string path, Encoding encoding)
        => Reader(new SpindleFileStream(path, FileMode.Open, FileAccess.Read, FileShare.Read, ReaderBufferSize, FileOptions.SequentialScan), encoding);

    private static readonly SpindleFileOptions s_asyncReaderOptions = new()
    {
        Mode = FileMode.Open,
        Access = FileAccess.Read,
        Share = FileShare.Read,
        BufferSize = ReaderBufferSize,
        Options = FileOptions.Asynchronous | FileOptions.SequentialScan,
    };

    /// <summary>The rest of a reader's text, as System.IO's ReadToEnd and its asynchronous loop give it.</summary>
    internal static Task<string> ReadToEndAsync(StreamReader reader, CancellationToken cancellationToken) => reader.ReadToEndAsync(cancellationToken);

    /// <summary>Every line of a reader.</summary>
    internal static string[] ReadLines(StreamReader reader)
    {
        var lines = new List<string>();
        while (reader.ReadLine() is string line)
        {
            lines.Add(line);
        }
        return lines.ToArray();
    }

    /// <summary>Every line of a reader, asynchronously, stopping between lines when cancelled.</summary>
    internal static async Task<string[]> ReadLinesAsync(StreamReader reader, CancellationToken cancellationToken)
    {
        var lines = new List<string>();
        while (await reader.ReadLineAsync(cancellationToken).ConfigureAwait(false) is string line)
        {
            lines.Add(line);
            cancellationToken.ThrowIfCancellationRequested();
        }
        return lines.ToArray();
    }
}
