namespace Spindle.Tests.Infrastructure;

/// <summary>
/// A small tmpfs mounted for one test (ENOSPC, EROFS), unmounted and removed on dispose. Mounting
/// needs root; <see cref="TryMount"/> returns null with the reason when the system refuses.
/// </summary>
public sealed class TmpfsMount : IDisposable
{
    private readonly TempDirectory _directory;

    private TmpfsMount(TempDirectory directory) => _directory = directory;

    public string Path => _directory.Path;

    public string File(string name) => _directory.File(name);

    /// <summary>Mounts a tmpfs of <paramref name="size"/> (mount syntax, e.g. "1m"), or returns null and why not.</summary>
    public static TmpfsMount? TryMount(string size, out string reason, bool readOnly = false)
    {
        var directory = new TempDirectory();
        string options = $"size={size}" + (readOnly ? ",ro" : "");
        (int code, string output) = SystemCommand.Run("mount", $"-t tmpfs -o {options} tmpfs {directory.Path}");
        if (code != 0)
        {
            directory.Dispose();
            reason = $"mount -t tmpfs refused (exit {code}): {output.Trim()}";
            return null;
        }
        reason = "";
        return new TmpfsMount(directory);
    }

    public void Dispose()
    {
        SystemCommand.Run("umount", _directory.Path);
        _directory.Dispose();
    }
}
