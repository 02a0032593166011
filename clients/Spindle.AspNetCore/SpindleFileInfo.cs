using Microsoft.Extensions.FileProviders;

namespace Spindle.AspNetCore;

/// <summary>
/// A file of a <see cref="SpindleFileProvider"/>: <see cref="PhysicalFileProvider"/>'s facts, or its link target's
/// when the file is a symbolic link, and Spindle's stream.
/// </summary>
/// <param name="physical">The file as <see cref="PhysicalFileProvider"/> found it.</param>
/// <param name="target">The file the link resolves to, as the kernel opens it; null when the file is not a link.</param>
internal sealed class SpindleFileInfo(IFileInfo physical, FileInfo? target) : IFileInfo
{
    public bool Exists => true;

    // PhysicalFileProvider reports a link's own lstat facts (its length is that of the target's name), and the
    // middleware would announce that length for the target's bytes.
    public long Length => target?.Length ?? physical.Length;

    public string? PhysicalPath => physical.PhysicalPath;

    public string Name => physical.Name;

    public DateTimeOffset LastModified => target is null ? physical.LastModified : new DateTimeOffset(target.LastWriteTimeUtc);

    public bool IsDirectory => false;

    /// <summary>
    /// A <see cref="SpindleFileStream"/> opened as <see cref="PhysicalFileProvider"/> opens its streams: others may
    /// read and write, no buffer (the caller copies in large blocks), asynchronous, sequential.
    /// </summary>
    public Stream CreateReadStream()
        => new SpindleFileStream(physical.PhysicalPath!, FileMode.Open, FileAccess.Read, FileShare.ReadWrite, bufferSize: 1,
            FileOptions.Asynchronous | FileOptions.SequentialScan);
}
