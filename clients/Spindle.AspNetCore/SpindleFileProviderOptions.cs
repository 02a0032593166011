namespace Spindle.AspNetCore;

/// <summary>What a <see cref="SpindleFileProvider"/> serves beyond <see cref="Microsoft.Extensions.FileProviders.PhysicalFileProvider"/>'s rules.</summary>
public sealed class SpindleFileProviderOptions
{
    /// <summary>
    /// Treats as missing (404) every file and directory whose real path, each symbolic link in it resolved, is not
    /// under the root's real path: a link to a file elsewhere, and everything under a linked directory that points
    /// elsewhere. Links that stay inside the root are still served. Off by default, like
    /// <see cref="Microsoft.Extensions.FileProviders.PhysicalFileProvider"/>, which follows every link; when on,
    /// each request resolves its path once more (a <c>realpath</c>).
    /// </summary>
    public bool RefuseLinksOutsideRoot { get; init; }
}
