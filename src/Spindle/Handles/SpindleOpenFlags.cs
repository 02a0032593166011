using Spindle.Interop;

namespace Spindle.Handles;

/// <summary>The open(2) flags for what Spindle adds beyond System.IO (none of which System.IO sets).</summary>
internal static class SpindleOpenFlags
{
    /// <summary>A file system that refuses O_DIRECT may open the file buffered instead (<see cref="Direct.DirectOpen.FallbackFlag"/>).</summary>
    internal const int DirectIOFallback = Direct.DirectOpen.FallbackFlag;

    /// <summary>
    /// Flags for a handle opened from bare <see cref="FileOptions"/>: <c>FILE_FLAG_NO_BUFFERING</c>
    /// (0x20000000, which System.IO accepts and ignores on Unix) means O_DIRECT.
    /// </summary>
    internal static int For(FileOptions options) => (options & SpindleFileOptions.NoBuffering) != 0 ? OpenFlags.O_DIRECT : 0;

    /// <summary>Flags for a handle opened from <see cref="SpindleFileOptions"/>.</summary>
    /// <exception cref="ArgumentException">Atomic append without write access, or with direct I/O.</exception>
    internal static int For(SpindleFileOptions options)
    {
        int flags = For(options.Options);
        if (options.DirectIO)
        {
            flags |= OpenFlags.O_DIRECT;
        }
        if (options.DirectIOFallback && (flags & OpenFlags.O_DIRECT) != 0)
        {
            flags |= DirectIOFallback;
        }
        if (options.AtomicAppend)
        {
            if ((options.Access & FileAccess.Write) == 0)
            {
                throw new ArgumentException("AtomicAppend requires write access.", nameof(options));
            }
            if ((flags & OpenFlags.O_DIRECT) != 0)
            {
                // A stream over O_DIRECT rewrites whole blocks in place, which O_APPEND would turn into appends.
                throw new ArgumentException("AtomicAppend cannot be combined with DirectIO or FILE_FLAG_NO_BUFFERING.", nameof(options));
            }
            flags |= OpenFlags.O_APPEND;
        }
        return flags;
    }
}
