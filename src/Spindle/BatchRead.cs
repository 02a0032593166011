using Microsoft.Win32.SafeHandles;

namespace Spindle;

/// <summary>One read of a batch (<see cref="SpindleRandomAccess.ReadBatchAsync(ReadOnlyMemory{BatchReadRequest}, Memory{BatchReadResult}, CancellationToken)"/>): a handle, a buffer and an offset.</summary>
public readonly struct BatchReadRequest
{
    /// <summary>A read of <paramref name="buffer"/>'s length at <paramref name="fileOffset"/> of <paramref name="handle"/>.</summary>
    /// <param name="handle">The file handle, opened with read access; requests of one batch may name different handles.</param>
    /// <param name="buffer">Where the bytes go; it must stay alive until the batch completes.</param>
    /// <param name="fileOffset">The file position to read from; ignored for handles without positions.</param>
    public BatchReadRequest(SafeFileHandle handle, Memory<byte> buffer, long fileOffset)
    {
        Handle = handle;
        Buffer = buffer;
        FileOffset = fileOffset;
    }

    /// <summary>The file handle.</summary>
    public SafeFileHandle Handle { get; }

    /// <summary>Where the bytes go.</summary>
    public Memory<byte> Buffer { get; }

    /// <summary>The file position to read from.</summary>
    public long FileOffset { get; }
}

/// <summary>The outcome of one read of a batch: the bytes read, or the exception that read alone met.</summary>
public readonly struct BatchReadResult
{
    internal BatchReadResult(int bytesRead)
    {
        BytesRead = bytesRead;
        Exception = null;
    }

    internal BatchReadResult(Exception exception)
    {
        BytesRead = 0;
        Exception = exception;
    }

    /// <summary>The number of bytes read: fewer than requested near the end of the file, 0 at the end or on failure.</summary>
    public int BytesRead { get; }

    /// <summary>The exception the read met (the one <see cref="SpindleRandomAccess.ReadAsync(SafeFileHandle, Memory{byte}, long, CancellationToken)"/> would have thrown), or null.</summary>
    public Exception? Exception { get; }

    /// <summary>Whether the read succeeded (<see cref="Exception"/> is null).</summary>
    public bool Succeeded => Exception is null;
}
