using Microsoft.Win32.SafeHandles;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Open;

/// <summary>
/// Two opens of one file in one process: the second succeeds or fails with a sharing violation exactly
/// as it does when both opens are System.IO's, whichever library opened first.
/// </summary>
public class FileShareConflictTests
{
    private static readonly FileShare[] Shares = [FileShare.None, FileShare.Read, FileShare.Write, FileShare.ReadWrite, FileShare.Delete];

    private delegate SafeFileHandle Opener(string path, FileMode mode, FileAccess access, FileShare share);

    private static readonly Opener SystemIo = (path, mode, access, share) => File.OpenHandle(path, mode, access, share);
    private static readonly Opener Spindle = (path, mode, access, share) => SpindleFile.OpenHandle(path, mode, access, share);

    public static TheoryData<string> Pairings() => ["Spindle then Spindle", "Spindle then System.IO", "System.IO then Spindle"];

    [Theory]
    [MemberData(nameof(Pairings))]
    public void Second_open_conflicts_exactly_when_it_does_between_two_System_IO_opens(string pairing)
    {
        Opener first = pairing.StartsWith("Spindle", StringComparison.Ordinal) ? Spindle : SystemIo;
        Opener second = pairing.EndsWith("Spindle", StringComparison.Ordinal) ? Spindle : SystemIo;
        using var directory = new TempDirectory();
        string path = directory.File("shared");
        File.WriteAllBytes(path, OpenDifferential.InitialContent);

        var differences = new List<string>();
        int conflicts = 0;
        foreach (FileAccess access1 in Enum.GetValues<FileAccess>())
        foreach (FileShare share1 in Shares)
        foreach (FileAccess access2 in Enum.GetValues<FileAccess>())
        foreach (FileShare share2 in Shares)
        {
            Outcome expected = SecondOpen(SystemIo, SystemIo, path, access1, share1, access2, share2);
            Outcome actual = SecondOpen(first, second, path, access1, share1, access2, share2);
            conflicts += expected.Threw ? 1 : 0;
            if (expected != actual)
            {
                differences.Add($"{access1}/{share1} then {access2}/{share2}: System.IO {expected}, {pairing} {actual}");
            }
        }
        Assert.True(differences.Count == 0, string.Join("\n", differences));
        Assert.True(conflicts > 0, "the matrix must contain sharing violations");
        Assert.Equal(OpenDifferential.InitialContent, File.ReadAllBytes(path));
    }

    private static Outcome SecondOpen(Opener first, Opener second, string path, FileAccess access1, FileShare share1, FileAccess access2, FileShare share2)
    {
        using SafeFileHandle held = first(path, FileMode.Open, access1, share1);
        return Outcome.Of(() =>
        {
            using SafeFileHandle other = second(path, FileMode.Open, access2, share2);
            return "opened";
        });
    }

    [Fact]
    public void Truncating_open_that_hits_a_sharing_violation_leaves_the_file_intact()
    {
        // System.IO truncates only after taking the lock; a refused Create/Truncate must not lose data.
        foreach (FileMode mode in new[] { FileMode.Create, FileMode.Truncate })
        {
            using var directory = new TempDirectory();
            string path = directory.File("data");
            File.WriteAllBytes(path, OpenDifferential.InitialContent);
            Outcome expected, actual;
            using (SafeFileHandle owner = File.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.None))
            {
                expected = Outcome.Of(() => File.OpenHandle(path, mode, FileAccess.Write, FileShare.Read).Dispose());
                actual = Outcome.Of(() => SpindleFile.OpenHandle(path, mode, FileAccess.Write, FileShare.Read).Dispose());
            }
            Assert.Equal(expected, actual);
            Assert.Equal(11, actual.HResult); // EWOULDBLOCK, as System.IO reports it
            Assert.Equal(OpenDifferential.InitialContent, File.ReadAllBytes(path));
        }
    }

    [Fact]
    public void Lock_is_released_when_the_handle_is_disposed()
    {
        using var directory = new TempDirectory();
        string path = directory.File("data");
        File.WriteAllBytes(path, OpenDifferential.InitialContent);
        SafeFileHandle owner = SpindleFile.OpenHandle(path, FileMode.Open, FileAccess.ReadWrite, FileShare.None);
        Assert.Throws<IOException>(() => File.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite));
        owner.Dispose();
        File.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.None).Dispose();
    }
}
