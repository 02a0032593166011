using Xunit.Abstractions;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Open;

/// <summary>Preallocation is a hint, except that no space or a too-large size fails the open and removes the file.</summary>
public class PreallocationTests
{
    private readonly ITestOutputHelper _output;

    public PreallocationTests(ITestOutputHelper output) => _output = output;

    private static readonly FileMode[] Modes = [FileMode.Create, FileMode.CreateNew, FileMode.OpenOrCreate, FileMode.Open, FileMode.Truncate, FileMode.Append];

    private static void AssertSameForEveryMode(Func<string> directoryOf, long size)
    {
        var differences = new List<string>();
        foreach (FileMode mode in Modes)
        {
            foreach (FileAccess access in Enum.GetValues<FileAccess>())
            {
                foreach (bool exists in new[] { false, true })
                {
                    string path = Path.Combine(directoryOf(), "prealloc");
                    string expected = Run(path, exists, p => File.OpenHandle(p, mode, access, FileShare.Read, FileOptions.None, size));
                    string actual = Run(path, exists, p => SpindleFile.OpenHandle(p, mode, access, FileShare.Read, FileOptions.None, size));
                    if (expected != actual)
                    {
                        differences.Add($"{mode}/{access}/exists={exists}/size={size}:\n  System.IO: {expected}\n  Spindle:   {actual}");
                    }
                }
            }
        }
        Assert.True(differences.Count == 0, string.Join("\n", differences));
    }

    private static string Run(string path, bool exists, OpenDifferential.Opener open)
    {
        if (exists)
        {
            File.WriteAllBytes(path, OpenDifferential.InitialContent);
        }
        string text = OpenDifferential.Describe(path, open);
        File.Delete(path);
        return text;
    }

    [Theory]
    [InlineData(0L)]
    [InlineData(1L)]
    [InlineData(1L << 20)]
    [InlineData(long.MaxValue)] // EFBIG
    [InlineData(-1L)]
    public void Preallocation_on_a_disk_matches_System_IO(long size)
    {
        using var directory = new TempDirectory();
        AssertSameForEveryMode(() => directory.Path, size);
    }

    [Fact]
    public void Preallocation_keeps_the_length_and_allocates_blocks()
    {
        using var directory = new TempDirectory();
        string path = directory.File("f");
        using (var handle = SpindleFile.OpenHandle(path, FileMode.CreateNew, FileAccess.Write, FileShare.Read, FileOptions.None, 1 << 20))
        {
            Assert.Equal(0, SpindleRandomAccess.GetLength(handle));
        }
        Assert.Equal(0, new FileInfo(path).Length);
    }

    [Theory]
    [InlineData(8L << 20)] // ENOSPC on a 1 MiB tmpfs
    [InlineData(long.MaxValue)] // EFBIG
    [InlineData(512L << 10)] // fits
    public void No_space_fails_the_open_and_removes_the_file_like_System_IO(long size)
    {
        using TmpfsMount? mount = TmpfsMount.TryMount("1m", out string reason);
        if (mount is null)
        {
            SkipReport.Print(_output, "No_space_fails_the_open", reason);
            return;
        }
        AssertSameForEveryMode(() => mount.Path, size);
        if (size == 8L << 20)
        {
            string path = mount.File("full");
            File.WriteAllBytes(path, OpenDifferential.InitialContent);
            var e = Assert.Throws<IOException>(() => SpindleFile.OpenHandle(path, FileMode.Create, FileAccess.Write, FileShare.Read, FileOptions.None, size));
            Assert.Contains(path, e.Message);
            Assert.False(File.Exists(path));
        }
    }
}
