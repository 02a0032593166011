using ZoneTree.AbstractFileStream;

namespace Spindle.ZoneTree;

/// <summary>
/// ZoneTree's file system on Spindle: every file ZoneTree opens (write-ahead logs, disk segments,
/// metadata) is a <see cref="SpindleFileStream"/>; directory and rename operations are the ones
/// ZoneTree's <see cref="LocalFileStreamProvider"/> makes.
/// </summary>
/// <example>
/// <code>
/// using var tree = new ZoneTreeFactory&lt;int, string&gt;(new SpindleFileStreamProvider())
///     .SetDataDirectory("data")
///     .OpenOrCreate();
/// </code>
/// </example>
public sealed class SpindleFileStreamProvider : IFileStreamProvider
{
    /// <summary>Creates a provider whose streams run asynchronous calls on <paramref name="engine"/>.</summary>
    /// <param name="engine">The engine of every stream; <see cref="IoEngine.Auto"/> for the process-wide one.</param>
    public SpindleFileStreamProvider(IoEngine engine = IoEngine.Auto)
    {
        Engine = engine;
    }

    /// <summary>The engine every stream's asynchronous calls run on.</summary>
    public IoEngine Engine { get; }

    /// <inheritdoc/>
    public IFileStream CreateFileStream(string path, FileMode mode, FileAccess access, FileShare share, int bufferSize = 4096, FileOptions options = FileOptions.None)
        => new SpindleZoneFileStream(path, new SpindleFileOptions
        {
            Mode = mode,
            Access = access,
            Share = share,
            BufferSize = bufferSize,
            Options = options,
            Engine = Engine,
        });

    /// <inheritdoc/>
    public bool FileExists(string path) => File.Exists(path);

    /// <inheritdoc/>
    public bool DirectoryExists(string path) => Directory.Exists(path);

    /// <inheritdoc/>
    public void CreateDirectory(string path) => Directory.CreateDirectory(path);

    /// <inheritdoc/>
    public void DeleteFile(string path) => File.Delete(path);

    /// <inheritdoc/>
    public void DeleteDirectory(string path, bool recursive) => Directory.Delete(path, recursive);

    /// <inheritdoc/>
    public string ReadAllText(string path)
    {
        using var reader = new StreamReader(OpenForReading(path));
        return reader.ReadToEnd();
    }

    /// <inheritdoc/>
    public byte[] ReadAllBytes(string path)
    {
        using SpindleFileStream stream = OpenForReading(path);
        var bytes = new byte[stream.Length];
        stream.ReadExactly(bytes);
        return bytes;
    }

    /// <inheritdoc/>
    /// <remarks>A rename, atomic on a local file system, as in ZoneTree's own provider.</remarks>
    public void Replace(string sourceFileName, string destinationFileName, string destinationBackupFileName)
        => File.Replace(sourceFileName, destinationFileName, destinationBackupFileName);

    /// <inheritdoc/>
    public DurableFileWriter GetDurableFileWriter() => new(this);

    /// <inheritdoc/>
    public IReadOnlyList<string> GetDirectories(string path) => Directory.GetDirectories(path);

    /// <inheritdoc/>
    public IReadOnlyList<string> GetFiles(string path) => Directory.GetFiles(path);

    /// <inheritdoc/>
    public void MoveFile(string sourceFileName, string destinationFileName) => File.Move(sourceFileName, destinationFileName);

    /// <inheritdoc/>
    /// <remarks><c>fsync</c> on the directory, so created, renamed and deleted entries survive a power loss.</remarks>
    public void SyncDirectory(string path) => DirectorySync.Sync(path);

    /// <inheritdoc/>
    public string CombinePaths(string path1, string path2) => Path.Combine(path1, path2);

    private static SpindleFileStream OpenForReading(string path)
        => new(path, FileMode.Open, FileAccess.Read, FileShare.Read, bufferSize: 1);
}
