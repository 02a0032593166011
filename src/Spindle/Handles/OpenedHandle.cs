using Microsoft.Win32.SafeHandles;

namespace Spindle.Handles;

/// <summary>An open handle and what its open learned about the file (for a stream built on it).</summary>
/// <param name="Handle">The open handle.</param>
/// <param name="Opened">What the open learned about the file.</param>
/// <param name="Length">The length of a regular file from the open's own <c>fstat</c>, or -1 when the open did not learn it.</param>
/// <param name="PendingStatusFlags">
/// -1, or the status flags an open of <see cref="OpenRequest.ForOneCall"/> left O_NONBLOCK on in their place: the
/// caller sets them (<c>F_SETFL</c>) before any I/O but a read of the page cache.
/// </param>
internal readonly record struct OpenedHandle(SafeFileHandle Handle, OpenedFile Opened, long Length = -1, int PendingStatusFlags = -1);
