using System.Diagnostics;
using Xunit.Abstractions;

namespace Spindle.Tests.Beyond;

/// <summary>A real tmpfs or ramfs mounted for one test and unmounted on dispose; null where mounting is refused.</summary>
internal sealed class ScratchMount : IDisposable
{
    private ScratchMount(string path) => Path = path;

    public string Path { get; }

    public static ScratchMount? TryCreate(string path, string type, string options, ITestOutputHelper output)
    {
        Directory.CreateDirectory(path);
        (int code, string error) = Run("mount", $"-t {type} {(options.Length > 0 ? "-o " + options : "")} {type} {path}");
        if (code != 0)
        {
            output.WriteLine($"SKIPPED: cannot mount {type} at {path} (exit {code}): {error}");
            Directory.Delete(path);
            return null;
        }
        return new ScratchMount(path);
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
