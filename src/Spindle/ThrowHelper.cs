using System.Diagnostics.CodeAnalysis;
using Spindle.Interop;

namespace Spindle;

/// <summary>Throwing lives here so that hot methods stay short and inlinable.</summary>
internal static class ThrowHelper
{
    [DoesNotReturn]
    internal static void ThrowArgumentNull(string paramName) => throw new ArgumentNullException(paramName);

    [DoesNotReturn]
    internal static void ThrowInvalidHandle(string paramName) => throw new ArgumentException("Invalid handle.", paramName);

    [DoesNotReturn]
    internal static void ThrowFileClosed() => throw new ObjectDisposedException(null, "Cannot access a closed file.");

    [DoesNotReturn]
    internal static void ThrowNeedNonNegative(string paramName) => throw new ArgumentOutOfRangeException(paramName, "Non-negative number required.");

    [DoesNotReturn]
    internal static void ThrowEnumOutOfRange(string paramName) => throw new ArgumentOutOfRangeException(paramName, "Enum value was out of legal range.");

    [DoesNotReturn]
    internal static void ThrowUnseekable() => throw new NotSupportedException("Stream does not support seeking.");

    [DoesNotReturn]
    internal static void ThrowForErrno(int errno, string? path) => throw IoErrors.ForErrno(errno, path);

    [DoesNotReturn]
    internal static void ThrowFileLengthTooBig(string paramName) =>
        throw new ArgumentOutOfRangeException(paramName, "Specified file length was too large for the file system.");
}
