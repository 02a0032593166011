namespace Spindle.Handles;

/// <summary>The open(2) flags for what Spindle adds beyond System.IO (none of which System.IO sets).</summary>
internal static class SpindleOpenFlags
{
    /// <summary>Flags for a handle opened from bare <see cref="FileOptions"/>.</summary>
    internal static int For(FileOptions options) => 0;

    /// <summary>Flags for a handle opened from <see cref="SpindleFileOptions"/>.</summary>
    internal static int For(SpindleFileOptions options) => For(options.Options);
}
