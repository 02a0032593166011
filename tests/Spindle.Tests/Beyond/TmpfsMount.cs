using System.Diagnostics;
using Xunit.Abstractions;

namespace Spindle.Tests.Beyond;

/// <summary>A real tmpfs mounted for one test and unmounted on dispose; null where mounting is refused.</summary>
internal sealed class TmpfsMount : IDisposable
{
    private TmpfsMount(string path) => Path = path;

    public string Path { get; }

    public static TmpfsMount? TryCreate(string path, string size, ITestOutputHelper output)
    {
        Directory.CreateDirectory(path);
        (int code, string error) = Run("mount", $"-t tmpfs -o size={size} tmpfs {path}");
        if (code != 0)
        {
            output.WriteLine($"SKIPPED: cannot mount tmpfs at {path} (exit {code}): {error}");
            Directory.Delete(path);
            return null;
        }
        return new TmpfsMount(path);
    }

    public void Dispose()
    {
        Run("umount", Path);
        try
        {
            Directory.Delete(Path, recursive: true);
        }
        catch (IOException)
        {
        }
    }

    private static (int Code, string Error) Run(string program, string arguments)
    {
        try
        {
            using var process = Process.Start(new ProcessStartInfo(program, arguments) { RedirectStandardError = true, RedirectStandardOutput = true })!;
            string error = process.StandardError.ReadToEnd();
            process.WaitForExit();
            return (process.ExitCode, error.Trim());
        }
        catch (System.ComponentModel.Win32Exception e)
        {
            return (-1, e.Message);
        }
    }
}
