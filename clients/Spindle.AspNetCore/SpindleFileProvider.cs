using Microsoft.Extensions.FileProviders;
using Microsoft.Extensions.Primitives;

namespace Spindle.AspNetCore;

/// <summary>
/// A <see cref="PhysicalFileProvider"/> whose files are read through Spindle: the same files, names, lengths,
/// modification times (so the same ETags), directory listings and change tokens, with
/// <see cref="IFileInfo.CreateReadStream"/> returning a <see cref="SpindleFileStream"/>.
/// </summary>
/// <remarks>
/// ASP.NET Core's static files send a file that has a <see cref="IFileInfo.PhysicalPath"/> through the response's
/// send-file feature, not through <see cref="IFileInfo.CreateReadStream"/>: add
/// <see cref="SpindleStaticFileExtensions.UseSpindleSendFile"/> before <c>UseStaticFiles</c> so that those bytes are
/// read by Spindle too.
/// </remarks>
public sealed class SpindleFileProvider : IFileProvider, IDisposable
{
    private readonly PhysicalFileProvider _physical;

    /// <summary>Serves the files under <paramref name="root"/>, with <see cref="PhysicalFileProvider"/>'s rules (hidden and dot files excluded).</summary>
    /// <param name="root">An absolute path to a directory.</param>
    public SpindleFileProvider(string root) => _physical = new PhysicalFileProvider(root);

    /// <summary>The absolute path of the served directory, ending with a separator.</summary>
    public string Root => _physical.Root;

    /// <inheritdoc/>
    public IFileInfo GetFileInfo(string subpath) => Wrap(_physical.GetFileInfo(subpath));

    /// <inheritdoc/>
    public IDirectoryContents GetDirectoryContents(string subpath)
    {
        IDirectoryContents contents = _physical.GetDirectoryContents(subpath);
        return contents.Exists ? new SpindleDirectoryContents(contents) : contents;
    }

    /// <inheritdoc/>
    public IChangeToken Watch(string filter) => _physical.Watch(filter);

    /// <inheritdoc/>
    public void Dispose() => _physical.Dispose();

    internal static IFileInfo Wrap(IFileInfo file) => file.Exists && !file.IsDirectory && file.PhysicalPath is not null ? new SpindleFileInfo(file) : file;

    private sealed class SpindleDirectoryContents(IDirectoryContents inner) : IDirectoryContents
    {
        public bool Exists => inner.Exists;

        public IEnumerator<IFileInfo> GetEnumerator()
        {
            foreach (IFileInfo file in inner)
            {
                yield return Wrap(file);
            }
        }

        System.Collections.IEnumerator System.Collections.IEnumerable.GetEnumerator() => GetEnumerator();
    }
}
