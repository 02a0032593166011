using FASTER.core;
using Spindle.Clients.Devices;

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
    public void Delete(FileDescriptor fileInfo) => CheckpointDirectory.Delete(_baseName, fileInfo.directoryName, fileInfo.fileName);

    /// <inheritdoc/>
    /// <remarks>Sub-directories first, then files, each newest first, as FASTER's local factory lists them.</remarks>
    public IEnumerable<FileDescriptor> ListContents(string path)
        => CheckpointDirectory.List(_baseName, path).Select(entry => new FileDescriptor(entry.DirectoryName, entry.FileName));

    private string PathOf(string? directory, string file) => Path.Combine(_baseName, directory ?? string.Empty, file);
}
