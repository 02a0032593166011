using System.Diagnostics.CodeAnalysis;

namespace Spindle.Streams;

/// <summary>The stream-only exceptions <see cref="FileStream"/> throws, with its messages, out of the hot methods (the shared ones are in <see cref="ThrowHelper"/>).</summary>
internal static class StreamThrowHelper
{
    [DoesNotReturn]
    internal static void ThrowUnreadable() => throw new NotSupportedException("Stream does not support reading.");

    [DoesNotReturn]
    internal static void ThrowUnwritable() => throw new NotSupportedException("Stream does not support writing.");

    [DoesNotReturn]
    internal static void ThrowInvalidSeekOrigin(string paramName) =>
        throw new ArgumentException("Invalid seek origin.", paramName);

    [DoesNotReturn]
    internal static void ThrowSeekBeforeAppendStart() =>
        throw new IOException("Unable seek backward to overwrite data that previously existed in a file opened in Append mode.");

    [DoesNotReturn]
    internal static void ThrowSetLengthBeforeAppendStart() =>
        throw new IOException("Unable to truncate data that previously existed in a file opened in Append mode.");

    [DoesNotReturn]
    internal static void ThrowCannotWriteWithUnflushableReadBuffer() =>
        throw new NotSupportedException("Cannot write to a BufferedStream while the read buffer is not empty if the underlying stream is not seekable. Ensure that the stream underlying this BufferedStream can seek or avoid interleaving read and write operations on this BufferedStream.");

    [DoesNotReturn]
    internal static void ThrowDerivedOnly() =>
        throw new InvalidOperationException("SpindleFileStream never calls this member of a derived-type strategy.");
}
