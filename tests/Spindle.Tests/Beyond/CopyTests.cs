using Spindle.Interop;
using Spindle.Tests.Infrastructure;
using Xunit.Abstractions;

namespace Spindle.Tests.Beyond;

public class CopyTests
{
    private readonly ITestOutputHelper _output;

    public CopyTests(ITestOutputHelper output) => _output = output;

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(4095)]
    [InlineData(4096)]
    [InlineData(65536)]
    [InlineData((1 << 20) + 17)]
    public void Copy_matches_File_Copy_bytes_mode_and_times(int size)
    {
        using var dir = new TempDirectory();
        byte[] data = RandomBytes(size, size);
        string source = dir.File("source");
        File.WriteAllBytes(source, data);
        File.SetUnixFileMode(source, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute | UnixFileMode.OtherRead | UnixFileMode.GroupWrite);
        File.SetLastWriteTimeUtc(source, new DateTime(2001, 2, 3, 4, 5, 6, 789, DateTimeKind.Utc));

        File.Copy(source, dir.File("system"));
        SpindleFile.Copy(source, dir.File("spindle"));

        Assert.Equal(data, File.ReadAllBytes(dir.File("spindle")));
        Assert.Equal(File.GetUnixFileMode(dir.File("system")), File.GetUnixFileMode(dir.File("spindle")));
        Assert.Equal(File.GetLastWriteTimeUtc(dir.File("system")), File.GetLastWriteTimeUtc(dir.File("spindle")));
        Assert.Equal(File.GetLastWriteTimeUtc(source), File.GetLastWriteTimeUtc(dir.File("spindle")));
    }

    [Fact]
    public void Copy_across_directories_keeps_the_source()
    {
        using var dir = new TempDirectory();
        Directory.CreateDirectory(dir.File("a"));
        Directory.CreateDirectory(dir.File("b/c"));
        byte[] data = RandomBytes(300_000, 7);
        File.WriteAllBytes(dir.File("a/f"), data);

        SpindleFile.Copy(dir.File("a/f"), dir.File("b/c/g"));

        Assert.Equal(data, File.ReadAllBytes(dir.File("b/c/g")));
        Assert.Equal(data, File.ReadAllBytes(dir.File("a/f")));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void Copy_onto_an_existing_file_behaves_like_File_Copy(bool overwrite)
    {
        using var dir = new TempDirectory();
        byte[] data = RandomBytes(10_000, 3);
        byte[] old = RandomBytes(50_000, 4);
        File.WriteAllBytes(dir.File("source"), data);
        foreach (string name in new[] { "system", "spindle" })
        {
            File.WriteAllBytes(dir.File(name), old);
            File.SetUnixFileMode(dir.File(name), UnixFileMode.UserRead | UnixFileMode.UserWrite);
        }

        string system = Outcome(() => File.Copy(dir.File("source"), dir.File("system"), overwrite), dir.Path);
        string spindle = Outcome(() => SpindleFile.Copy(dir.File("source"), dir.File("spindle"), overwrite), dir.Path);

        Assert.Equal(system.Replace("system", "X"), spindle.Replace("spindle", "X"));
        Assert.Equal(overwrite ? data : old, File.ReadAllBytes(dir.File("spindle")));
        Assert.Equal(File.ReadAllBytes(dir.File("system")), File.ReadAllBytes(dir.File("spindle")));
        Assert.Equal(File.GetUnixFileMode(dir.File("system")), File.GetUnixFileMode(dir.File("spindle")));
    }

    public static TheoryData<string, string, bool> ErrorCases => new()
    {
        { "missing", "new", false },
        { "missing", "new", true },
        { "file", "nodir/new", false },
        { "file", "dir", false },
        { "file", "dir", true },
        { "file", "dir/", true },
        { "file", "file", false },
        { "file", "file", true },
        { "file", "./file", true },
        { "dir", "new", true },
        { "file", "other/", true },
        { "", "new", false },
        { "file", "", false },
        { "file", "bad\0name", false },
        { "file", "file/", false },
        { "file", "/proc/self/spindle-refused", false }, // a directory that exists but refuses creation
        { "file", "/proc/self/spindle-refused", true },
    };

    [Theory]
    [MemberData(nameof(ErrorCases))]
    public void Copy_errors_match_File_Copy(string source, string destination, bool overwrite)
    {
        using var dir = new TempDirectory();
        Directory.CreateDirectory(dir.File("dir"));
        File.WriteAllText(dir.File("file"), "the source");
        File.WriteAllText(dir.File("other"), "other");
        string Full(string name) => name.Length == 0 ? name : dir.File(name);

        string system = Outcome(() => File.Copy(Full(source), Full(destination), overwrite), dir.Path);
        string spindle = Outcome(() => SpindleFile.Copy(Full(source), Full(destination), overwrite), dir.Path);
        _output.WriteLine(spindle);

        Assert.Equal(system, spindle);
        Assert.Equal("the source", File.ReadAllText(dir.File("file")));
        Assert.Equal("other", File.ReadAllText(dir.File("other")));
        Assert.False(File.Exists(dir.File("new")));
    }

    [Fact]
    public void Copy_null_paths_throw_ArgumentNullException_like_File_Copy()
    {
        Assert.Equal(Outcome(() => File.Copy(null!, "x"), ""), Outcome(() => SpindleFile.Copy(null!, "x"), ""));
        Assert.Equal(Outcome(() => File.Copy("x", null!), ""), Outcome(() => SpindleFile.Copy("x", null!), ""));
        Assert.Throws<ArgumentNullException>(() => { _ = SpindleFile.CopyAsync(null!, "x"); });
    }

    [Fact]
    public void Copy_of_a_pseudo_file_that_reports_zero_length_copies_its_content()
    {
        using var dir = new TempDirectory();
        File.Copy("/proc/version", dir.File("system"));
        SpindleFile.Copy("/proc/version", dir.File("spindle"));
        Assert.NotEmpty(File.ReadAllBytes(dir.File("spindle")));
        Assert.Equal(File.ReadAllBytes(dir.File("system")), File.ReadAllBytes(dir.File("spindle")));
    }

    [Fact]
    public unsafe void Copy_of_a_4_GiB_sparse_file_keeps_the_holes_and_the_data()
    {
        using var dir = new TempDirectory();
        string source = dir.File("sparse");
        long length = 4L << 30;
        (long Offset, byte[] Data)[] extents =
        [
            (0, RandomBytes(64 << 10, 1)),
            (1L << 30, RandomBytes(128 << 10, 2)),
            ((3L << 30) + (12 << 10), RandomBytes(8 << 10, 3)),
            (length - (4 << 10), RandomBytes(4 << 10, 4)),
        ];
        using (var handle = File.OpenHandle(source, FileMode.Create, FileAccess.Write))
        {
            System.IO.RandomAccess.SetLength(handle, length);
            foreach (var (offset, data) in extents)
            {
                System.IO.RandomAccess.Write(handle, data, offset);
            }
        }

        SpindleFile.Copy(source, dir.File("copy"));

        string copy = dir.File("copy");
        Assert.Equal(length, new FileInfo(copy).Length);
        long allocated = AllocatedBytes(copy);
        _output.WriteLine($"source allocated {AllocatedBytes(source)} bytes, copy allocated {allocated} bytes of {length}");
        Assert.True(allocated < 16L << 20, $"the copy allocated {allocated} bytes: holes were filled");

        using var reader = File.OpenHandle(copy);
        foreach (var (offset, data) in extents)
        {
            byte[] back = new byte[data.Length];
            Assert.Equal(data.Length, System.IO.RandomAccess.Read(reader, back, offset));
            Assert.Equal(data, back);
        }
        // Sample the holes: zeros on both sides of each extent.
        byte[] probe = new byte[4096];
        foreach (long offset in new[] { 64L << 10, (1L << 30) - 4096, (2L << 30), length - (8 << 10) })
        {
            System.IO.RandomAccess.Read(reader, probe, offset);
            Assert.All(probe, b => Assert.Equal(0, b));
        }
    }

    [Fact]
    public async Task CopyAsync_reports_progress_up_to_the_length_and_copies_the_bytes()
    {
        using var dir = new TempDirectory();
        byte[] data = RandomBytes(3_000_000, 9);
        File.WriteAllBytes(dir.File("source"), data);
        var reports = new List<long>();
        var progress = new SynchronousProgress(value => { lock (reports) { reports.Add(value); } });

        await SpindleFile.CopyAsync(dir.File("source"), dir.File("copy"), progress: progress).WaitAsync(TimeSpan.FromSeconds(30));

        Assert.Equal(data, File.ReadAllBytes(dir.File("copy")));
        Assert.NotEmpty(reports);
        Assert.Equal(data.Length, reports[^1]);
        Assert.Equal(reports.OrderBy(x => x), reports);
    }

    [Fact]
    public async Task CopyAsync_errors_match_Copy()
    {
        using var dir = new TempDirectory();
        File.WriteAllText(dir.File("file"), "x");
        await Assert.ThrowsAsync<FileNotFoundException>(() => SpindleFile.CopyAsync(dir.File("missing"), dir.File("new")));
        await Assert.ThrowsAsync<IOException>(() => SpindleFile.CopyAsync(dir.File("file"), dir.File("file")));
    }

    [Fact]
    public async Task CopyAsync_cancelled_before_it_starts_does_nothing()
    {
        using var dir = new TempDirectory();
        File.WriteAllText(dir.File("file"), "x");
        Task copy = SpindleFile.CopyAsync(dir.File("file"), dir.File("new"), cancellationToken: new CancellationToken(true));
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => copy);
        Assert.False(File.Exists(dir.File("new")));
    }

    [Fact]
    public async Task CopyAsync_cancelled_between_chunks_removes_the_partial_destination()
    {
        using var dir = new TempDirectory();
        string source = dir.File("sparse");
        using (var handle = File.OpenHandle(source, FileMode.Create, FileAccess.Write))
        {
            System.IO.RandomAccess.SetLength(handle, 1L << 30);
            System.IO.RandomAccess.Write(handle, RandomBytes(4096, 1), 0);
            System.IO.RandomAccess.Write(handle, RandomBytes(4096, 2), 512L << 20);
        }
        using var cancellation = new CancellationTokenSource();
        var progress = new SynchronousProgress(_ => cancellation.Cancel());

        Task copy = SpindleFile.CopyAsync(source, dir.File("copy"), progress: progress, cancellationToken: cancellation.Token);

        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => copy.WaitAsync(TimeSpan.FromSeconds(30)));
        Assert.False(File.Exists(dir.File("copy")));
        Assert.True(File.Exists(source));
    }

    [Fact]
    public void Copy_from_another_file_system_falls_back_and_copies_the_bytes()
    {
        using var dir = new TempDirectory(AppContext.BaseDirectory);
        using var tmpfs = ScratchMount.TryCreate(dir.File("tmpfs"), "tmpfs", "size=16m", _output);
        if (tmpfs is null)
        {
            return;
        }
        byte[] data = RandomBytes(5_000_000, 11);
        File.WriteAllBytes(Path.Combine(tmpfs.Path, "f"), data);
        long fallbacks = SpindleTotals.Snapshot().Fallbacks;

        SpindleFile.Copy(Path.Combine(tmpfs.Path, "f"), dir.File("copy"));
        SpindleFile.Copy(dir.File("copy"), Path.Combine(tmpfs.Path, "back"));

        _output.WriteLine($"copy_file_range refused {SpindleTotals.Snapshot().Fallbacks - fallbacks} time(s) across file systems");
        Assert.Equal(data, File.ReadAllBytes(dir.File("copy")));
        Assert.Equal(data, File.ReadAllBytes(Path.Combine(tmpfs.Path, "back")));
    }

    // Where the file system can share extents (xfs with reflink, mkfs.xfs's default; btrfs), File.Copy clones the file
    // (FICLONE): the copy takes no data blocks, so it succeeds on a file system too full for a second copy of the bytes.
    // So does Spindle's now. Before, it preallocated the copy's extents first (ENOSPC here: IOException where File.Copy
    // succeeded) and then copied them; a 64 MiB copy on btrfs took 2.64x File.Copy's time.
    [Fact]
    public void Copy_on_a_file_system_that_shares_extents_is_a_clone_and_fits_where_the_bytes_would_not()
    {
        using var dir = new TempDirectory(AppContext.BaseDirectory);
        using ScratchMount? xfs = ScratchMount.TryCreateOnImage(dir.File("xfs"), "xfs", 320L << 20, _output);
        if (xfs is null)
        {
            return;
        }
        const int Size = 64 << 20;
        string source = Path.Combine(xfs.Path, "source");
        byte[] data = RandomBytes(Size / 2, 31);
        using (var stream = new FileStream(source, FileMode.CreateNew))
        {
            stream.Write(data);
            stream.Seek(Size / 4, SeekOrigin.Current); // a hole
            stream.Write(data, 0, Size / 4);
            stream.Flush(flushToDisk: true);
        }
        // Fill the file system until less than the source's data is free.
        long free = new DriveInfo(xfs.Path).AvailableFreeSpace;
        using (new FileStream(Path.Combine(xfs.Path, "filler"), new FileStreamOptions
        {
            Mode = FileMode.CreateNew, Access = FileAccess.Write, PreallocationSize = free - (Size / 4),
        }))
        {
        }
        free = new DriveInfo(xfs.Path).AvailableFreeSpace;
        Assert.True(free < Size / 2, $"{free} bytes still free");

        File.Copy(source, Path.Combine(xfs.Path, "system"));
        SpindleFile.Copy(source, Path.Combine(xfs.Path, "spindle"));

        long taken = free - new DriveInfo(xfs.Path).AvailableFreeSpace;
        _output.WriteLine($"{free} bytes free before both copies, {taken} taken by them");
        byte[] expected = File.ReadAllBytes(source);
        Assert.Equal(expected, File.ReadAllBytes(Path.Combine(xfs.Path, "system")));
        Assert.Equal(expected, File.ReadAllBytes(Path.Combine(xfs.Path, "spindle")));
        Assert.True(taken < 1 << 20, $"the copies took {taken} bytes of free space");
    }

    [Fact]
    public void CopyBytes_copies_a_range_between_different_offsets_and_stops_at_the_end_of_the_source()
    {
        using var dir = new TempDirectory();
        byte[] source = RandomBytes(200_000, 21);
        byte[] target = RandomBytes(150_000, 22);
        File.WriteAllBytes(dir.File("s"), source);
        File.WriteAllBytes(dir.File("t"), target);
        using (var input = File.OpenHandle(dir.File("s")))
        using (var output = File.OpenHandle(dir.File("t"), FileMode.Open, FileAccess.ReadWrite))
        {
            Assert.Equal(50_000, Spindle.Copy.ExtentCopier.CopyBytes(input, 1000, output, 70_000, 50_000, null, null, CancellationToken.None));
            // Asking for more than the source has copies what there is.
            Assert.Equal(10_000, Spindle.Copy.ExtentCopier.CopyBytes(input, 190_000, output, 145_000, 99_999, null, null, CancellationToken.None));
        }
        byte[] expected = target.ToArray();
        Array.Resize(ref expected, 155_000);
        Array.Copy(source, 1000, expected, 70_000, 50_000);
        Array.Copy(source, 190_000, expected, 145_000, 10_000);
        Assert.Equal(expected, File.ReadAllBytes(dir.File("t")));
    }

    internal static unsafe long AllocatedBytes(string path)
    {
        StatxBuffer status;
        Assert.Equal(0, Libc.Statx(LinuxConstants.AT_FDCWD, path, 0, 0x400, &status));
        return (long)status.Blocks * 512;
    }

    internal static byte[] RandomBytes(int size, int seed)
    {
        byte[] data = new byte[size];
        new Random(seed).NextBytes(data);
        return data;
    }

    /// <summary>The exception type and message (paths made relative), or "ok".</summary>
    internal static string Outcome(Action action, string root)
    {
        try
        {
            action();
            return "ok";
        }
        catch (Exception e)
        {
            string message = root.Length == 0 ? e.Message : e.Message.Replace(root, "<dir>");
            return $"{e.GetType().FullName}: {message}";
        }
    }

    /// <summary>An <see cref="IProgress{T}"/> that reports on the caller's thread, so that the test sees every value.</summary>
    private sealed class SynchronousProgress(Action<long> report) : IProgress<long>
    {
        public void Report(long value) => report(value);
    }
}
