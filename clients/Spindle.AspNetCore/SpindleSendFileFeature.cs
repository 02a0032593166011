using System.IO.Pipelines;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.Win32.SafeHandles;

namespace Spindle.AspNetCore;

/// <summary>
/// The response body feature of a request, with <see cref="SendFileAsync"/> done by Spindle: the file opened with
/// <see cref="SpindleFile.OpenHandle(string, FileMode, FileAccess, FileShare, FileOptions, long)"/> and read with
/// <see cref="SpindleRandomAccess.ReadAsync(SafeFileHandle, Memory{byte}, long, CancellationToken)"/> straight into
/// the server's response buffers (no intermediate stream or copy buffer), with the argument rules and results of
/// ASP.NET Core's own fallback.
/// </summary>
internal sealed class SpindleSendFileFeature(IHttpResponseBodyFeature inner) : IHttpResponseBodyFeature
{
    /// <summary>The most bytes read into the response at once.</summary>
    private const int ChunkSize = 64 * 1024;

    public Stream Stream => inner.Stream;

    public PipeWriter Writer => inner.Writer;

    public void DisableBuffering() => inner.DisableBuffering();

    public Task StartAsync(CancellationToken cancellationToken = default) => inner.StartAsync(cancellationToken);

    public Task CompleteAsync() => inner.CompleteAsync();

    public async Task SendFileAsync(string path, long offset, long? count, CancellationToken cancellationToken = default)
    {
        using SafeFileHandle handle = SpindleFile.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite,
            FileOptions.Asynchronous | FileOptions.SequentialScan);
        long length = SpindleRandomAccess.GetLength(handle);
        if (offset < 0 || offset > length)
        {
            throw new ArgumentOutOfRangeException(nameof(offset), offset, string.Empty);
        }
        if (count.HasValue && (count.Value < 0 || count.Value > length - offset))
        {
            throw new ArgumentOutOfRangeException(nameof(count), count, string.Empty);
        }
        cancellationToken.ThrowIfCancellationRequested();

        PipeWriter writer = inner.Writer;
        long remaining = count ?? length - offset;
        while (remaining > 0)
        {
            int size = (int)Math.Min(remaining, ChunkSize);
            Memory<byte> buffer = writer.GetMemory(size);
            int read = await SpindleRandomAccess.ReadAsync(handle, buffer.Slice(0, Math.Min(size, buffer.Length)), offset, cancellationToken).ConfigureAwait(false);
            if (read == 0)
            {
                break; // the file became shorter: send what there was, as the fallback's copy does
            }
            writer.Advance(read);
            offset += read;
            remaining -= read;
            FlushResult flushed = await writer.FlushAsync(cancellationToken).ConfigureAwait(false);
            if (flushed.IsCanceled || flushed.IsCompleted)
            {
                break;
            }
        }
    }
}
