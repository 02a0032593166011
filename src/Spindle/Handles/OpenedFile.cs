namespace Spindle.Handles;

/// <summary>
/// What opening a file learned about it on the way: the flags open(2) was given, the file type (from the
/// directory check of a read-only open, or a successful truncation) and the file system (from the lock
/// decision). A stream hands it to <see cref="Engines.FastPath.HandleFacts"/> at its first asynchronous
/// operation, so that the engines do not ask the kernel again what the open already knew.
/// </summary>
internal struct OpenedFile
{
    /// <summary>The flags open(2) was given (after any O_DIRECT fallback), or <see cref="UnknownFlags"/>.</summary>
    internal int Flags;

    /// <summary>The S_IFMT bits of the file, or 0 when the open did not learn them.</summary>
    internal int FileType;

    /// <summary>statfs's <c>f_type</c> of the file's file system, or 0 when the open did not ask.</summary>
    internal long FileSystemType;

    /// <summary>No value of <see cref="Flags"/> open(2) accepts or <c>fcntl(F_GETFL)</c> returns.</summary>
    internal const int UnknownFlags = int.MinValue;

    /// <summary>Nothing learned: every fact is asked of the kernel.</summary>
    internal static OpenedFile Unknown => new() { Flags = UnknownFlags };

    /// <summary>Whether the open learned anything (a handle from elsewhere did not go through Spindle's open).</summary>
    internal readonly bool IsKnown => Flags != UnknownFlags;
}
