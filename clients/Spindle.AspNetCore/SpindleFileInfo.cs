using Microsoft.Extensions.FileProviders;

namespace Spindle.AspNetCore;

/// <summary>A file of a <see cref="SpindleFileProvider"/>: <see cref="PhysicalFileProvider"/>'s facts, Spindle's stream.</summary>
internal sealed class SpindleFileInfo(IFileInfo physical) : IFileInfo
{
    public bool Exists => physical.Exists;

    public long Length => physical.Length;

    public string? PhysicalPath => physical.PhysicalPath;

    public string Name => physical.Name;

    public DateTimeOffset LastModified => physical.LastModified;

    public bool IsDirectory => false;

    /// <summary>
    /// A <see cref="SpindleFileStream"/> opened as <see cref="PhysicalFileProvider"/> opens its streams: others may
    /// read and write, no buffer (the caller copies in large blocks), asynchronous, sequential.
    /// </summary>
    public Stream CreateReadStream()
        => new SpindleFileStream(physical.PhysicalPath!, FileMode.Open, FileAccess.Read, FileShare.ReadWrite, bufferSize: 1,
            FileOptions.Asynchronous | FileOptions.SequentialScan);
}
