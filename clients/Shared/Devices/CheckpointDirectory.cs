namespace Spindle.Clients.Devices;

/// <summary>
/// What a named-device factory deletes and lists below its base directory, as FASTER's and Tsavorite's local factories
/// do; their <c>FileDescriptor</c> types differ, so each factory maps its own to and from these strings.
/// </summary>
internal static class CheckpointDirectory
{
    /// <summary>
    /// With a <paramref name="fileName"/>, deletes the single segment file a checkpoint device writes (<c>name.0</c>);
    /// without, the directory and everything in it. Missing files and directories are not an error.
    /// </summary>
    internal static void Delete(string baseName, string? directoryName, string? fileName)
    {
        if (fileName != null)
        {
            File.Delete(Path.Combine(baseName, directoryName ?? string.Empty, fileName + ".0"));
            return;
        }
        string directory = Path.Combine(baseName, directoryName ?? string.Empty, string.Empty);
        if (Directory.Exists(directory))
        {
            Directory.Delete(directory, recursive: true);
        }
    }

    /// <summary>Sub-directories first (as a directory name), then files (as a file name), each newest first, as the local factories list them.</summary>
    internal static IEnumerable<(string DirectoryName, string FileName)> List(string baseName, string path)
    {
        var directory = new DirectoryInfo(Path.Combine(baseName, path));
        if (!directory.Exists)
        {
            yield break;
        }
        foreach (DirectoryInfo folder in directory.GetDirectories().OrderByDescending(f => f.LastWriteTimeUtc))
        {
            yield return (folder.Name, string.Empty);
        }
        foreach (FileInfo file in directory.GetFiles().OrderByDescending(f => f.LastWriteTimeUtc))
        {
            yield return (string.Empty, file.Name);
        }
    }
}
