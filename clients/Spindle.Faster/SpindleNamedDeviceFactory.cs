using FASTER.core;

namespace Spindle.Faster;

/// <summary>
/// Creates <see cref="SpindleDevice"/>s for FASTER's checkpoint and commit files (the role
/// <see cref="LocalStorageNamedDeviceFactory"/> plays), so a log's commit records and a store's checkpoints
/// go through Spindle like its data. Pass it to <see cref="DeviceLogCommitCheckpointManager"/>.
/// </summary>
public sealed class SpindleNamedDeviceFactory : INamedDeviceFactory
{
    private readonly SpindleDeviceOptions _options;
    private string _baseName = string.Empty; // the directory every descriptor is relative to

    /// <summary>Creates a factory whose devices use <paramref name="options"/> (null: the defaults).</summary>
    /// <param name="options">The options of every device the factory creates.</param>
    public SpindleNamedDeviceFactory(SpindleDeviceOptions? options = null)
    {
        _options = options ?? SpindleDeviceOptions.Default;
    }

    /// <inheritdoc/>
    public void Initialize(string baseName) => _baseName = baseName;

    /// <inheritdoc/>
    public IDevice Get(FileDescriptor fileInfo) => new SpindleDevice(PathOf(fileInfo.directoryName, fileInfo.fileName), _options);

    /// <inheritdoc/>
    /// <remarks>
    /// A file descriptor deletes the single segment file FASTER's checkpoint devices write
    /// (<c>name.0</c>); a directory descriptor deletes the directory and everything in it.
    /// Missing files and directories are not an error.
    /// </remarks>
    public void Delete(FileDescriptor fileInfo)
    {
        if (fileInfo.fileName != null)
        {
            File.Delete(PathOf(fileInfo.directoryName, fileInfo.fileName + ".0"));
            return;
        }
        string directory = PathOf(fileInfo.directoryName, string.Empty);
        if (Directory.Exists(directory))
        {
            Directory.Delete(directory, recursive: true);
        }
    }

    /// <inheritdoc/>
    /// <remarks>Sub-directories first, then files, each newest first, as FASTER's local factory lists them.</remarks>
    public IEnumerable<FileDescriptor> ListContents(string path)
    {
        var directory = new DirectoryInfo(Path.Combine(_baseName, path));
        if (!directory.Exists)
        {
            yield break;
        }
        foreach (DirectoryInfo folder in directory.GetDirectories().OrderByDescending(f => f.LastWriteTimeUtc))
        {
            yield return new FileDescriptor(folder.Name, string.Empty);
        }
        foreach (FileInfo file in directory.GetFiles().OrderByDescending(f => f.LastWriteTimeUtc))
        {
            yield return new FileDescriptor(string.Empty, file.Name);
        }
    }

    private string PathOf(string? directory, string file) => Path.Combine(_baseName, directory ?? string.Empty, file);
}
