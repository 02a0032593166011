using System.Diagnostics;

namespace Spindle.Tests.Tool;

/// <summary>A tiny tmpfs mounted on a directory (we run as root), so that a command really meets ENOSPC.</summary>
internal sealed class SmallTmpfs : IDisposable
{
    private readonly string _path;

    private SmallTmpfs(string path) => _path = path;

    /// <summary>Mounts a tmpfs of <paramref name="size"/> on <paramref name="path"/>, or returns null when mounting is refused.</summary>
    public static SmallTmpfs? TryMount(string path, string size, bool readOnly = false) =>
        Exec("mount", "-t", "tmpfs", "-o", $"size={size}{(readOnly ? ",ro" : "")}", "tmpfs", path) ? new SmallTmpfs(path) : null;

    public void Dispose() => Exec("umount", _path);

    private static bool Exec(string file, params string[] args)
    {
        try
        {
            var start = new ProcessStartInfo(file) { RedirectStandardError = true, RedirectStandardOutput = true };
            foreach (string arg in args)
            {
                start.ArgumentList.Add(arg);
            }
            using Process process = Process.Start(start)!;
            process.WaitForExit(10_000);
            return process.HasExited && process.ExitCode == 0;
        }
        catch (System.ComponentModel.Win32Exception)
        {
            return false;
        }
    }
}
