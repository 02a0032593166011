using Spindle.Clients.Devices;
using Tsavorite.core;

namespace Spindle.Garnet;

/// <summary>
/// Creates <see cref="SpindleStorageDevice"/>s under one base directory: Garnet asks it for the store's log
/// (<c>Store/hlog</c>), the append-only file and every checkpoint and commit file, the role Garnet's
/// <see cref="LocalStorageNamedDeviceFactory"/> plays. Made by <see cref="SpindleNamedDeviceFactoryCreator"/>.
/// </summary>
public sealed class SpindleNamedDeviceFactory : INamedDeviceFactory
{
    private readonly SpindleStorageDeviceOptions _options;
    private readonly string _baseName; // the directory every descriptor is relative to

    /// <summary>Creates a factory for devices under <paramref name="baseName"/> with <paramref name="options"/> (null: the defaults).</summary>
    /// <param name="baseName">The directory every file descriptor is relative to.</param>
    /// <param name="options">The options of every device the factory creates.</param>
    public SpindleNamedDeviceFactory(string baseName, SpindleStorageDeviceOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(baseName);
        _baseName = baseName;
        _options = options ?? SpindleStorageDeviceOptions.Default;
    }

    /// <inheritdoc/>
    /// <remarks>The device starts as one unbounded segment (<c>name.0</c>); Tsavorite's log initialises it with its segment size.</remarks>
    public IDevice Get(FileDescriptor fileInfo) => new SpindleStorageDevice(PathOf(fileInfo.directoryName, fileInfo.fileName), _options);

    /// <summary>The sector size a device for <paramref name="fileInfo"/> would have: the file system's direct-I/O alignment there (at least 512 bytes).</summary>
    /// <param name="fileInfo">The file the device would be for.</param>
    /// <returns>The sector size in bytes.</returns>
    public uint GetSectorSize(FileDescriptor fileInfo)
    {
        string directory = Path.GetDirectoryName(Path.GetFullPath(PathOf(fileInfo.directoryName, fileInfo.fileName ?? "probe")))!;
        Directory.CreateDirectory(directory);
        return SectorSizes.Probe(directory);
    }

    /// <inheritdoc/>
    /// <remarks>
    /// A file descriptor deletes the single segment file a checkpoint device writes (<c>name.0</c>); a directory
    /// descriptor deletes the directory and everything in it. Missing files and directories are not an error.
    /// </remarks>
    public void Delete(FileDescriptor fileInfo) => CheckpointDirectory.Delete(_baseName, fileInfo.directoryName, fileInfo.fileName);

    /// <inheritdoc/>
    /// <remarks>Sub-directories first, then files, each newest first, as Garnet's local factory lists them (newest is preferred).</remarks>
    public IEnumerable<FileDescriptor> ListContents(string path)
        => CheckpointDirectory.List(_baseName, path).Select(entry => new FileDescriptor(entry.DirectoryName, entry.FileName));

    private string PathOf(string? directory, string file) => Path.Combine(_baseName, directory ?? string.Empty, file);
}
