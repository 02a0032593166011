using System.Diagnostics;
using Microsoft.Win32.SafeHandles;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Open;

/// <summary>Process-wide behaviour: descriptor inheritance, the file-locking switch, the umask.</summary>
public class ChildProcessTests
{
    [Theory]
    [InlineData(FileShare.Read, false)]
    [InlineData(FileShare.Read | FileShare.Inheritable, true)]
    public void Child_process_inherits_the_descriptor_only_with_FileShare_Inheritable(FileShare share, bool inherited)
    {
        using var directory = new TempDirectory();
        string path = directory.File("secret");
        File.WriteAllBytes(path, OpenDifferential.InitialContent);
        using SafeFileHandle spindle = SpindleFile.OpenHandle(path, FileMode.Open, FileAccess.Read, share);
        using SafeFileHandle system = File.OpenHandle(path, FileMode.Open, FileAccess.Read, share);

        Assert.Equal(inherited ? path : "none", TargetInChild(spindle));
        Assert.Equal(TargetInChild(system), TargetInChild(spindle));
    }

    // The child shell reports what its own descriptor with the handle's number refers to.
    private static string TargetInChild(SafeFileHandle handle)
    {
        int fd = (int)handle.DangerousGetHandle();
        var start = new ProcessStartInfo("/bin/sh") { RedirectStandardOutput = true };
        start.ArgumentList.Add("-c");
        start.ArgumentList.Add($"readlink /proc/$$/fd/{fd} || echo none");
        using Process process = Process.Start(start)!;
        string output = process.StandardOutput.ReadToEnd().Trim();
        Assert.True(process.WaitForExit(30_000));
        return output;
    }

    /// <summary>Child: opens a file twice with FileShare.None in each library and prints both outcomes.</summary>
    public static int OpenExclusiveTwice(string[] args)
    {
        if (args.Length > 1 && args[1] == "switch")
        {
            AppContext.SetSwitch("System.IO.DisableFileLocking", true);
        }
        string path = args[0];
        File.WriteAllBytes(path, OpenDifferential.InitialContent);
        Console.Write("System.IO:" + Twice((p, m, s) => File.OpenHandle(p, m, FileAccess.ReadWrite, s), path));
        Console.Write(" Spindle:" + Twice((p, m, s) => SpindleFile.OpenHandle(p, m, FileAccess.ReadWrite, s), path));
        return 0;
    }

    private static string Twice(Func<string, FileMode, FileShare, SafeFileHandle> open, string path)
    {
        using SafeFileHandle first = open(path, FileMode.Open, FileShare.None);
        // The second open truncates: with locking off it succeeds and the file is emptied.
        Outcome second = Outcome.Of(() =>
        {
            open(path, FileMode.Truncate, FileShare.None).Dispose();
            return "opened";
        });
        long length = System.IO.RandomAccess.GetLength(first);
        return $"{second}/length={length}";
    }

    [Theory]
    [InlineData("none")]
    [InlineData("environment")]
    [InlineData("switch")]
    public void DisableFileLocking_turns_sharing_checks_off_in_both_libraries(string how)
    {
        using var directory = new TempDirectory();
        var environment = new Dictionary<string, string>();
        if (how == "environment")
        {
            environment["DOTNET_SYSTEM_IO_DISABLEFILELOCKING"] = "1";
        }
        (int code, string output) = ChildProcess.Run(typeof(ChildProcessTests), nameof(OpenExclusiveTwice), environment,
            directory.File("f"), how);
        Assert.True(code == 0, output);
        string[] parts = output.Trim().Split(" Spindle:");
        Assert.Equal(2, parts.Length);
        Assert.Equal(parts[0].Replace("System.IO:", ""), parts[1]);
        if (how == "none")
        {
            Assert.StartsWith("System.IO:IOException hr=11/length=14", parts[0]);
        }
        else
        {
            Assert.Equal("System.IO:=opened/length=0", parts[0]);
        }
    }

    /// <summary>Child: with file locking off, copies a file onto itself with SpindleFile.Copy and prints the outcome and the file's length.</summary>
    public static int CopyOntoItself(string[] args)
    {
        string path = args[0];
        File.WriteAllBytes(path, OpenDifferential.InitialContent);
        Outcome outcome = Outcome.Of(() =>
        {
            SpindleFile.Copy(path, path, overwrite: true);
            return "copied";
        });
        Console.Write($"{outcome}/length={new FileInfo(path).Length}");
        return 0;
    }

    // Without locks (the switch, or NFS and SMB, where none is taken) nothing stops the destination's open from
    // truncating the source: Spindle checks the two are one file before it opens the destination. With locks the
    // lock refuses it (the differential copy tests compare that case with File.Copy).
    [Fact]
    public void With_locking_off_a_copy_onto_itself_is_refused_and_the_file_keeps_its_bytes()
    {
        using var directory = new TempDirectory();
        (int code, string output) = ChildProcess.Run(typeof(ChildProcessTests), nameof(CopyOntoItself),
            new Dictionary<string, string> { ["DOTNET_SYSTEM_IO_DISABLEFILELOCKING"] = "1" }, directory.File("f"));
        Assert.True(code == 0, output);
        if (Spindle.Portable.PassThrough.Enabled)
        {
            // Passed through to System.IO (as off Linux), the copy is File.Copy's, which truncates its own source here.
            Assert.Equal("=copied/length=0", output.Trim());
            return;
        }
        Assert.Equal($"IOException hr=11/length={OpenDifferential.InitialContent.Length}", output.Trim());
    }

    /// <summary>Child: sets a umask, creates files with both libraries and prints their permission bits.</summary>
    public static int CreateUnderUmask(string[] args)
    {
        TestLibc.Umask(Convert.ToInt32(args[1], 8));
        string directory = args[0];
        foreach (UnixFileMode? create in new UnixFileMode?[] { null, (UnixFileMode)0x1FF, (UnixFileMode)0xFFF, UnixFileMode.UserRead })
        {
            var system = new FileStreamOptions { Mode = FileMode.CreateNew, Access = FileAccess.Write, UnixCreateMode = create };
            var spindle = new SpindleFileOptions { Mode = FileMode.CreateNew, Access = FileAccess.Write, UnixCreateMode = create };
            string a = Path.Combine(directory, $"system-{create}");
            string b = Path.Combine(directory, $"spindle-{create}");
            new FileStream(a, system).Dispose();
            SpindleFile.OpenHandle(b, spindle).Dispose();
            Console.WriteLine($"{(int?)create}: {(int)File.GetUnixFileMode(a)} {(int)File.GetUnixFileMode(b)}");
        }
        // The bare OpenHandle overload uses the default mode.
        SpindleFile.OpenHandle(Path.Combine(directory, "default"), FileMode.CreateNew, FileAccess.Write).Dispose();
        File.OpenHandle(Path.Combine(directory, "default-system"), FileMode.CreateNew, FileAccess.Write).Dispose();
        Console.WriteLine($"default: {(int)File.GetUnixFileMode(Path.Combine(directory, "default-system"))} {(int)File.GetUnixFileMode(Path.Combine(directory, "default"))}");
        return 0;
    }

    [Theory]
    [InlineData("022")]
    [InlineData("027")]
    [InlineData("000")]
    [InlineData("777")]
    public void Created_files_get_the_create_mode_under_the_umask_like_System_IO(string umask)
    {
        using var directory = new TempDirectory();
        (int code, string output) = ChildProcess.Run(typeof(ChildProcessTests), nameof(CreateUnderUmask), null, directory.Path, umask);
        Assert.True(code == 0, output);
        string[] lines = output.Trim().Split('\n');
        Assert.Equal(5, lines.Length);
        foreach (string line in lines)
        {
            string[] modes = line.Split(':')[1].Trim().Split(' ');
            Assert.True(modes[0] == modes[1], line);
        }
        int mask = Convert.ToInt32(umask, 8);
        Assert.Equal($"default: {0x1B6 & ~mask} {0x1B6 & ~mask}", lines[^1]);
    }
}
