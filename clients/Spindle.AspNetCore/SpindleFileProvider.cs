using Microsoft.Extensions.FileProviders;
using Microsoft.Extensions.Primitives;

namespace Spindle.AspNetCore;

/// <summary>
/// A <see cref="PhysicalFileProvider"/> whose files are read through Spindle: the same files, names, lengths,
/// modification times (so the same ETags), directory listings and change tokens, with
/// <see cref="IFileInfo.CreateReadStream"/> returning a <see cref="SpindleFileStream"/>. A file that is a symbolic
/// link has its target's length and modification time (<see cref="PhysicalFileProvider"/> reports the link's own).
/// </summary>
/// <remarks>
/// <para>
/// ASP.NET Core's static files send a file that has a <see cref="IFileInfo.PhysicalPath"/> through the response's
/// send-file feature, not through <see cref="IFileInfo.CreateReadStream"/>: add
/// <see cref="SpindleStaticFileExtensions.UseSpindleSendFile"/> before <c>UseStaticFiles</c> so that those bytes are
/// read by Spindle too.
/// </para>
/// <para>
/// Like <see cref="PhysicalFileProvider"/>, it follows symbolic links wherever they point, also out of the root, and
/// serves files inside dot-directories (<c>/.git/config</c>): only the last name of a path is checked against the
/// hidden and dot-file rules. Set <see cref="SpindleFileProviderOptions.RefuseLinksOutsideRoot"/> to refuse links
/// that leave the root; keep what must not be served out of the root.
/// </para>
/// </remarks>
public sealed class SpindleFileProvider : IFileProvider, IDisposable
{
    private readonly PhysicalFileProvider _physical;

    // A symbolic link's own size (what PhysicalFileProvider reports for it) is the length of its target's name,
    // which Linux keeps under PATH_MAX: a file at least this long is no link.
    private const long LinuxPathMax = 4096;

    // the root with every link resolved, when links out of it are refused; null when every link is followed
    private readonly string? _realRoot;

    /// <summary>Serves the files under <paramref name="root"/>, with <see cref="PhysicalFileProvider"/>'s rules (hidden and dot files excluded).</summary>
    /// <param name="root">An absolute path to a directory.</param>
    public SpindleFileProvider(string root)
        : this(root, new SpindleFileProviderOptions())
    {
    }

    /// <summary>Serves the files under <paramref name="root"/>, with <see cref="PhysicalFileProvider"/>'s rules and <paramref name="options"/>.</summary>
    /// <param name="root">An absolute path to a directory.</param>
    /// <param name="options">What is served beyond <see cref="PhysicalFileProvider"/>'s rules.</param>
    public SpindleFileProvider(string root, SpindleFileProviderOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        _physical = new PhysicalFileProvider(root);
        if (options.RefuseLinksOutsideRoot)
        {
            _realRoot = RealPath.Of(_physical.Root)
                ?? throw new DirectoryNotFoundException($"The root '{root}' does not resolve to a directory; RefuseLinksOutsideRoot needs its real path.");
        }
    }

    /// <summary>The absolute path of the served directory, ending with a separator.</summary>
    public string Root => _physical.Root;

    /// <inheritdoc/>
    public IFileInfo GetFileInfo(string subpath)
    {
        IFileInfo file = _physical.GetFileInfo(subpath);
        return Wrap(file) ?? new NotFoundFileInfo(file.Name);
    }

    /// <inheritdoc/>
    public IDirectoryContents GetDirectoryContents(string subpath)
    {
        IDirectoryContents contents = _physical.GetDirectoryContents(subpath);
        if (!contents.Exists)
        {
            return contents;
        }
        if (_realRoot is not null && !IsInside(Path.Combine(_physical.Root, subpath.TrimStart('/', '\\'))))
        {
            return NotFoundDirectoryContents.Singleton;
        }
        return new SpindleDirectoryContents(contents, this);
    }

    /// <inheritdoc/>
    public IChangeToken Watch(string filter) => _physical.Watch(filter);

    /// <inheritdoc/>
    public void Dispose() => _physical.Dispose();

    /// <summary>
    /// <paramref name="file"/> with Spindle's stream and, for a link, its target's facts; null when the file must
    /// not be served: a link that resolves to nothing or to a directory, or out of the root when that is refused.
    /// </summary>
    private IFileInfo? Wrap(IFileInfo file)
    {
        if (!file.Exists || file.PhysicalPath is not { } path)
        {
            return file;
        }
        if (file.IsDirectory)
        {
            return _realRoot is null || IsInside(path) ? file : null;
        }
        if (_realRoot is null && file.Length >= LinuxPathMax)
        {
            return new SpindleFileInfo(file, target: null); // too long for a link's own size: spares the readlink
        }
        bool isLink;
        try
        {
            isLink = File.ResolveLinkTarget(path, returnFinalTarget: false) is not null;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null; // gone since PhysicalFileProvider looked
        }
        if (!isLink && _realRoot is null)
        {
            return new SpindleFileInfo(file, target: null);
        }
        // realpath resolves as the kernel will when the file is opened (".." after a linked directory included)
        string? real = RealPath.Of(path);
        if (real is null || (_realRoot is not null && !RealPath.IsUnder(real, _realRoot)))
        {
            return null;
        }
        if (!isLink)
        {
            return new SpindleFileInfo(file, target: null);
        }
        var target = new FileInfo(real);
        return target.Exists ? new SpindleFileInfo(file, target) : null;
    }

    /// <summary>Whether <paramref name="path"/> resolves to the root or under it.</summary>
    private bool IsInside(string path) => RealPath.Of(path) is { } real && RealPath.IsUnder(real, _realRoot!);

    private sealed class SpindleDirectoryContents(IDirectoryContents inner, SpindleFileProvider provider) : IDirectoryContents
    {
        public bool Exists => inner.Exists;

        public IEnumerator<IFileInfo> GetEnumerator()
        {
            foreach (IFileInfo file in inner)
            {
                if (provider.Wrap(file) is { } served)
                {
                    yield return served;
                }
            }
        }

        System.Collections.IEnumerator System.Collections.IEnumerable.GetEnumerator() => GetEnumerator();
    }
}
