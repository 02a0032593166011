using Microsoft.Win32.SafeHandles;

namespace Spindle.Handles;

/// <summary>An open handle and what its open learned about the file (for a stream built on it).</summary>
internal readonly record struct OpenedHandle(SafeFileHandle Handle, OpenedFile Opened);
