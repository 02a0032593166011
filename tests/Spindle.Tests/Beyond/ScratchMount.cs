using System.Diagnostics;
using Xunit.Abstractions;

namespace Spindle.Tests.Beyond;

/// <summary>
/// A real tmpfs or ramfs, or a file system made on a loop-mounted sparse image, mounted for one test and unmounted
/// (its loop device detached, its image deleted) on dispose; null where mounting is refused.
/// </summary>
internal sealed class ScratchMount : IDisposable
{
    private readonly string? _device;
    private readonly string? _image;

    private ScratchMount(string path, string? device = null, string? image = null)
    {
        Path = path;
        _device = device;
        _image = image;
    }

    public string Path { get; }

    /// <summary>Makes a <paramref name="fileSystem"/> (mkfs.<paramref name="fileSystem"/>) on a sparse image of <paramref name="size"/> bytes beside <paramref name="path"/> and mounts it there.</summary>
    public static ScratchMount? TryCreateOnImage(string path, string fileSystem, long size, ITestOutputHelper output)
    {
        if (!Environment.IsPrivilegedProcess || !File.Exists("/dev/loop-control"))
        {
            output.WriteLine($"SKIPPED: a {fileSystem} on a loop device needs root and /dev/loop-control");
            return null;
        }
        string image = path + ".image";
        using (var stream = new FileStream(image, FileMode.CreateNew))
        {
            stream.SetLength(size);
        }
        (int code, string result) = Run("losetup", $"--find --show {image}", standardOutput: true);
        if (code != 0)
        {
            output.WriteLine($"SKIPPED: losetup failed (exit {code}): {result}");
            File.Delete(image);
            return null;
        }
        string device = result.Trim();
        Directory.CreateDirectory(path);
        (code, result) = Run("mkfs." + fileSystem, $"-q {device}");
        if (code == 0)
        {
            (code, result) = Run("mount", $"{device} {path}");
        }
        if (code != 0)
        {
            output.WriteLine($"SKIPPED: cannot make and mount a {fileSystem} (exit {code}): {result}");
            Run("losetup", $"-d {device}");
            Directory.Delete(path);
            File.Delete(image);
            return null;
        }
        return new ScratchMount(path, device, image);
    }

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
        if (Run("umount", Path).Code != 0)
        {
            // Busy: io_uring drops a completed request's file reference on the thread that reaped it, at that thread's
            // next return from the kernel, so a file closed just now may still hold the mount. Detach it now; the
            // kernel unmounts it (and frees the loop device) once the last reference goes.
            Run("umount", $"-l {Path}");
        }
        if (_device is not null)
        {
            Run("losetup", $"-d {_device}");
            File.Delete(_image!);
        }
        try
        {
            Directory.Delete(Path, recursive: true);
        }
        catch (IOException)
        {
        }
    }

    private static (int Code, string Error) Run(string program, string arguments, bool standardOutput = false)
    {
        try
        {
            using var process = Process.Start(new ProcessStartInfo(program, arguments) { RedirectStandardError = true, RedirectStandardOutput = true })!;
            Task<string> output = process.StandardOutput.ReadToEndAsync();
            string error = process.StandardError.ReadToEnd();
            process.WaitForExit();
            return (process.ExitCode, standardOutput && process.ExitCode == 0 ? output.Result : error.Trim());
        }
        catch (System.ComponentModel.Win32Exception e)
        {
            return (-1, e.Message);
        }
    }
}
