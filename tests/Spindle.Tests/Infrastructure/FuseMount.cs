namespace Spindle.Tests.Infrastructure;

/// <summary>
/// A directory mounted again through FUSE (bindfs: every call goes through a user-space daemon), for tests of how
/// Spindle serves files on a FUSE file system; unmounted and removed on dispose. Needs bindfs, /dev/fuse and root;
/// <see cref="TryMount"/> returns null with the reason when one is missing.
/// </summary>
public sealed class FuseMount : IDisposable
{
    private readonly TempDirectory _source;
    private readonly TempDirectory _mountPoint;

    private FuseMount(TempDirectory source, TempDirectory mountPoint) => (_source, _mountPoint) = (source, mountPoint);

    /// <summary>A path on the FUSE mount.</summary>
    public string File(string name) => _mountPoint.File(name);

    /// <summary>The same file in the directory underneath (not through FUSE).</summary>
    public string SourceFile(string name) => _source.File(name);

    /// <summary>Mounts a fresh directory through bindfs, or returns null and why not.</summary>
    public static FuseMount? TryMount(out string reason)
    {
        if (!System.IO.File.Exists("/dev/fuse"))
        {
            reason = "no /dev/fuse";
            return null;
        }
        var source = new TempDirectory();
        var mountPoint = new TempDirectory();
        (int code, string output) = SystemCommand.Run("bindfs", $"{source.Path} {mountPoint.Path}");
        if (code != 0)
        {
            mountPoint.Dispose();
            source.Dispose();
            reason = $"bindfs failed (exit {code}): {output.Trim()} (a Debian package; .ci/run installs it)";
            return null;
        }
        reason = "";
        return new FuseMount(source, mountPoint);
    }

    public void Dispose()
    {
        if (SystemCommand.Run("fusermount3", $"-u {_mountPoint.Path}").Code != 0)
        {
            SystemCommand.Run("umount", _mountPoint.Path);
        }
        _mountPoint.Dispose();
        _source.Dispose();
    }
}
