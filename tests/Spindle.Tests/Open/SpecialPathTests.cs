using Microsoft.Win32.SafeHandles;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Open;

/// <summary>Directories, links, missing parents, bad paths, read-only files and devices, against File.OpenHandle.</summary>
public class SpecialPathTests
{
    private static readonly FileMode[] WritingModes = [FileMode.Open, FileMode.OpenOrCreate, FileMode.Create, FileMode.CreateNew, FileMode.Truncate, FileMode.Append];

    private static void AssertSame(string path, FileMode mode, FileAccess access, FileShare share = FileShare.Read, List<string>? differences = null,
        Action<SafeFileHandle>? use = null)
    {
        string expected = OpenDifferential.Describe(path, p => File.OpenHandle(p, mode, access, share), use);
        string actual = OpenDifferential.Describe(path, p => SpindleFile.OpenHandle(p, mode, access, share), use);
        string line = $"{path} {mode}/{access}:\n  System.IO: {expected}\n  Spindle:   {actual}";
        if (differences is null)
        {
            Assert.True(expected == actual, line);
        }
        else if (expected != actual)
        {
            differences.Add(line);
        }
    }

    private static void ForEveryModeAndAccess(string path, FileShare share = FileShare.Read, Action<SafeFileHandle>? use = null)
    {
        var differences = new List<string>();
        foreach (FileMode mode in WritingModes)
        {
            foreach (FileAccess access in Enum.GetValues<FileAccess>())
            {
                AssertSame(path, mode, access, share, differences, use);
            }
        }
        Assert.True(differences.Count == 0, string.Join("\n", differences));
    }

    [Fact]
    public void Directory_is_rejected_as_System_IO_rejects_it()
    {
        using var directory = new TempDirectory();
        string path = directory.File("sub");
        Directory.CreateDirectory(path);
        ForEveryModeAndAccess(path);
        ForEveryModeAndAccess(path + "/");
        Assert.Throws<UnauthorizedAccessException>(() => SpindleFile.OpenHandle(path));
    }

    [Fact]
    public void Symbolic_links_are_followed()
    {
        using var directory = new TempDirectory();
        string target = directory.File("target");
        string link = directory.File("link");
        File.WriteAllBytes(target, OpenDifferential.InitialContent);
        File.CreateSymbolicLink(link, target);
        using (SafeFileHandle handle = SpindleFile.OpenHandle(link, FileMode.Open, FileAccess.ReadWrite))
        {
            SpindleRandomAccess.Write(handle, "HELLO"u8, 0);
        }
        Assert.Equal("HELLO, spindle"u8.ToArray(), File.ReadAllBytes(target));
        Assert.True(File.ResolveLinkTarget(link, false) is not null);

        // A dangling link: creating modes create the target, others fail the same way.
        string dangling = directory.File("dangling");
        var differences = new List<string>();
        foreach (FileMode mode in WritingModes)
        {
            foreach (FileAccess access in Enum.GetValues<FileAccess>())
            {
                string missing = directory.File("missing-" + mode + access);
                File.Delete(dangling);
                File.CreateSymbolicLink(dangling, missing);
                string expected = OpenDifferential.Describe(dangling, p => File.OpenHandle(p, mode, access)) + OpenDifferential.OnDisk(missing);
                File.Delete(missing);
                string actual = OpenDifferential.Describe(dangling, p => SpindleFile.OpenHandle(p, mode, access)) + OpenDifferential.OnDisk(missing);
                if (expected != actual)
                {
                    differences.Add($"{mode}/{access}: System.IO {expected}, Spindle {actual}");
                }
            }
        }
        Assert.True(differences.Count == 0, string.Join("\n", differences));

        // A link loop.
        string loop = directory.File("loop");
        File.CreateSymbolicLink(loop, loop);
        ForEveryModeAndAccess(loop);
    }

    [Fact]
    public void Missing_files_and_parents_throw_the_same_exceptions()
    {
        using var directory = new TempDirectory();
        ForEveryModeAndAccess(directory.File("missing"));
        ForEveryModeAndAccess(directory.File("no-such-dir/file"));
        ForEveryModeAndAccess(directory.File("no/such/dir/file"));
        // A parent that is a file, not a directory (ENOTDIR).
        File.WriteAllBytes(directory.File("plain"), [1]);
        ForEveryModeAndAccess(directory.File("plain/file"));
        ForEveryModeAndAccess(directory.File("plain/"));
    }

    [Fact]
    public void Bad_paths_throw_the_same_exceptions()
    {
        using var directory = new TempDirectory();
        var differences = new List<string>();
        string[] paths =
        [
            "", "bad\0name", directory.File("nul\0"), directory.File(new string('n', 256)), directory.File(new string('n', 255)),
            directory.Path + "/" + string.Join("/", Enumerable.Repeat(new string('d', 200), 25)) + "/file",
            "   ", directory.File("with space "),
        ];
        foreach (string path in paths)
        {
            foreach (FileMode mode in WritingModes)
            {
                AssertSame(path, mode, FileAccess.Write, differences: differences);
            }
        }
        Assert.True(differences.Count == 0, string.Join("\n", differences));
        Assert.Equal(Outcome.Of(() => File.OpenHandle(null!)), Outcome.Of(() => SpindleFile.OpenHandle(null!)));
        Assert.Equal(Outcome.Of(() => File.OpenHandle(null!)), Outcome.Of(() => SpindleFile.OpenHandle(null!, new SpindleFileOptions())));
    }

    [Fact]
    public void Read_only_file_opens_like_System_IO()
    {
        // The tests run as root, which may write to a 0444 file; the comparison holds for any user.
        using var directory = new TempDirectory();
        string path = directory.File("readonly");
        var differences = new List<string>();
        foreach (FileMode mode in WritingModes)
        {
            foreach (FileAccess access in Enum.GetValues<FileAccess>())
            {
                File.WriteAllBytes(path, OpenDifferential.InitialContent);
                File.SetUnixFileMode(path, UnixFileMode.UserRead | UnixFileMode.GroupRead | UnixFileMode.OtherRead);
                string expected = OpenDifferential.Describe(path, p => File.OpenHandle(p, mode, access));
                File.Delete(path);
                File.WriteAllBytes(path, OpenDifferential.InitialContent);
                File.SetUnixFileMode(path, UnixFileMode.UserRead | UnixFileMode.GroupRead | UnixFileMode.OtherRead);
                string actual = OpenDifferential.Describe(path, p => SpindleFile.OpenHandle(p, mode, access));
                File.Delete(path);
                if (expected != actual)
                {
                    differences.Add($"{mode}/{access}: System.IO {expected}, Spindle {actual}");
                }
            }
        }
        Assert.True(differences.Count == 0, string.Join("\n", differences));
    }

    [Fact]
    public void Read_only_file_system_fails_writes_with_EROFS_like_System_IO()
    {
        using TmpfsMount? mount = TmpfsMount.TryMount("64k", out string reason, readOnly: true);
        if (mount is null)
        {
            Console.WriteLine($"SKIPPED Read_only_file_system: {reason}");
            return;
        }
        ForEveryModeAndAccess(mount.File("new"));
        Assert.Equal(30, Outcome.Of(() => SpindleFile.OpenHandle(mount.File("new"), FileMode.Create, FileAccess.Write)).HResult);
    }

    [Theory]
    [InlineData("/dev/null")]
    [InlineData("/dev/zero")]
    public void Character_devices_open_like_System_IO(string device)
    {
        // Shared locks only: an exclusive flock on a device file would disturb other processes.
        ForEveryModeAndAccess(device, FileShare.ReadWrite);
    }

    [Fact]
    public void Named_pipe_opens_like_System_IO_and_truncation_is_ignored()
    {
        using var directory = new TempDirectory();
        string fifo = directory.File("fifo");
        TestLibc.CreateFifo(fifo);
        // Read-write opens of a FIFO do not wait for a peer on Linux.
        var differences = new List<string>();
        foreach (FileMode mode in WritingModes)
        {
            AssertSame(fifo, mode, FileAccess.ReadWrite, FileShare.ReadWrite, differences);
        }
        Assert.True(differences.Count == 0, string.Join("\n", differences));
    }
}
