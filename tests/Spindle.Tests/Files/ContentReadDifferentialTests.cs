using System.Text;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Files;

/// <summary>
/// SpindleFile's reads against System.IO.File's on the same files: random contents and sizes, every encoding and
/// byte order mark, procfs and sysfs files, missing files and directories, a directory, a file held exclusively,
/// a file too large for an array, and cancellation. Results, exception types and where they surface must agree.
/// </summary>
public class ContentReadDifferentialTests : IDisposable
{
    private readonly TempDirectory _directory = new();

    public void Dispose() => _directory.Dispose();

    /// <summary>The encodings a reader is given: with and without preambles, fallbacks that replace and that throw.</summary>
    internal static Encoding[] Encodings =>
    [
        Encoding.UTF8, new UTF8Encoding(false), new UTF8Encoding(false, true), Encoding.Unicode, Encoding.BigEndianUnicode,
        new UnicodeEncoding(false, false), Encoding.UTF32, new UTF32Encoding(true, true), new UTF32Encoding(false, false),
        Encoding.Latin1, Encoding.ASCII,
    ];

    /// <summary>Each read twin, by name, on System.IO and on Spindle.</summary>
    private static IEnumerable<(string Name, Func<string, Encoding, Task<string>> SystemIO, Func<string, Encoding, Task<string>> Spindle)> TextReads()
    {
        yield return ("ReadAllText", (p, e) => ContentOutcome.Of(() => Task.FromResult(File.ReadAllText(p, e)), ContentOutcome.Show),
            (p, e) => ContentOutcome.Of(() => Task.FromResult(SpindleFile.ReadAllText(p, e)), ContentOutcome.Show));
        yield return ("ReadAllTextAsync", (p, e) => ContentOutcome.Of(() => File.ReadAllTextAsync(p, e), ContentOutcome.Show),
            (p, e) => ContentOutcome.Of(() => SpindleFile.ReadAllTextAsync(p, e), ContentOutcome.Show));
        yield return ("ReadAllLines", (p, e) => ContentOutcome.Of(() => Task.FromResult(File.ReadAllLines(p, e)), ContentOutcome.Show),
            (p, e) => ContentOutcome.Of(() => Task.FromResult(SpindleFile.ReadAllLines(p, e)), ContentOutcome.Show));
        yield return ("ReadAllLinesAsync", (p, e) => ContentOutcome.Of(() => File.ReadAllLinesAsync(p, e), ContentOutcome.Show),
            (p, e) => ContentOutcome.Of(() => SpindleFile.ReadAllLinesAsync(p, e), ContentOutcome.Show));
        yield return ("ReadLines", (p, e) => ContentOutcome.Of(() => Task.FromResult(File.ReadLines(p, e).ToArray()), ContentOutcome.Show),
            (p, e) => ContentOutcome.Of(() => Task.FromResult(SpindleFile.ReadLines(p, e).ToArray()), ContentOutcome.Show));
        yield return ("ReadLinesAsync", async (p, e) => OpenErrorsThroughTheTask(await ContentOutcome.Of(() => ContentOutcome.ToArrayAsync(File.ReadLinesAsync(p, e)), ContentOutcome.Show)),
            (p, e) => ContentOutcome.Of(() => ContentOutcome.ToArrayAsync(SpindleFile.ReadLinesAsync(p, e)), ContentOutcome.Show));
    }

    private static async Task<string> SystemBytes(string path)
        => await ContentOutcome.Of(() => Task.FromResult(File.ReadAllBytes(path)), ContentOutcome.Show) + " | "
            + OpenErrorsThroughTheTask(await ContentOutcome.Of(() => File.ReadAllBytesAsync(path), ContentOutcome.Show));

    /// <summary>
    /// The one intended difference of ReadAllBytesAsync and ReadLinesAsync: Spindle's open is asynchronous, so the
    /// open's errors come through the task (the first MoveNextAsync) where System.IO, whose open is synchronous, throws
    /// them from the call (System.IO's own ReadAllTextAsync reports them through its task). Bad arguments are thrown
    /// from the call by both.
    /// </summary>
    private static string OpenErrorsThroughTheTask(string outcome)
        => !Spindle.Portable.PassThrough.Enabled
            && outcome.StartsWith("thrown ", StringComparison.Ordinal) && !outcome.Contains("Argument", StringComparison.Ordinal)
            ? "faulted " + outcome["thrown ".Length..]
            : outcome;

    private static async Task<string> SpindleBytes(string path)
        => await ContentOutcome.Of(() => Task.FromResult(SpindleFile.ReadAllBytes(path)), ContentOutcome.Show) + " | "
            + await ContentOutcome.Of(() => SpindleFile.ReadAllBytesAsync(path), ContentOutcome.Show);

    /// <summary>Every read twin on <paramref name="path"/> with <paramref name="encoding"/>: the differences, empty when none.</summary>
    private static async Task<List<string>> Differences(string path, Encoding encoding)
    {
        var differences = new List<string>();
        string expected = await SystemBytes(path), actual = await SpindleBytes(path);
        if (expected != actual)
        {
            differences.Add($"bytes: System.IO {expected}, Spindle {actual}");
        }
        foreach (var (name, systemIO, spindle) in TextReads())
        {
            expected = await systemIO(path, encoding);
            actual = await spindle(path, encoding);
            if (expected != actual)
            {
                differences.Add($"{name} ({encoding.WebName}, preamble {encoding.Preamble.Length}): System.IO {expected}, Spindle {actual}");
            }
        }
        return differences;
    }

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(4)]
    [InlineData(4096)]
    [InlineData(4097)]
    [InlineData(1 << 20)]
    public async Task Random_bytes_read_the_same_as_bytes_and_as_text_in_every_encoding(int size)
    {
        var random = new Random(size);
        var differences = new List<string>();
        byte[][] prefixes = [[], [0xEF, 0xBB, 0xBF], [0xFE, 0xFF], [0xFF, 0xFE], [0xFF, 0xFE, 0, 0], [0, 0, 0xFE, 0xFF], [0xEF, 0xBB]];
        foreach (byte[] prefix in prefixes)
        {
            byte[] contents = new byte[size];
            random.NextBytes(contents);
            prefix.AsSpan(0, Math.Min(prefix.Length, size)).CopyTo(contents);
            string path = _directory.File($"random-{prefix.Length}");
            File.WriteAllBytes(path, contents);
            foreach (Encoding encoding in size > 4097 ? [Encoding.UTF8, Encoding.Unicode] : Encodings)
            {
                differences.AddRange(await Differences(path, encoding));
            }
        }
        Assert.True(differences.Count == 0, string.Join("\n", differences));
    }

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(100)]
    [InlineData(4097)]
    [InlineData(300_000)]
    public async Task Text_written_in_each_encoding_reads_the_same_in_each_encoding(int length)
    {
        var random = new Random(length);
        string text = RandomText(random, length);
        var differences = new List<string>();
        // A writer that throws on the odd lone surrogate writes nothing to read.
        foreach (Encoding writer in Encodings.Where(e => e.EncoderFallback is not EncoderExceptionFallback))
        {
            string path = _directory.File("text");
            File.WriteAllText(path, text, writer);
            foreach (Encoding reader in length > 4097 ? [Encoding.UTF8, writer] : Encodings)
            {
                differences.AddRange(await Differences(path, reader));
            }
        }
        Assert.True(differences.Count == 0, string.Join("\n", differences));
    }

    /// <summary>Text with line breaks of every kind, surrogate pairs, non-ASCII letters and the odd lone surrogate.</summary>
    internal static string RandomText(Random random, int length)
    {
        string[] pieces = ["a", "Zz", " ", "\r", "\n", "\r\n", "\n\r", "é", "ж", "中", "😀", "\uFEFF", "\0", "\uD800", "line"];
        var text = new StringBuilder(length);
        while (text.Length < length)
        {
            text.Append(pieces[random.Next(pieces.Length)]);
        }
        return text.ToString(0, length);
    }

    [Fact]
    public async Task Procfs_and_sysfs_files_read_the_same()
    {
        // Files whose contents do not change between two reads; procfs reports their length as 0, sysfs as 4096.
        string[] candidates = ["/proc/version", "/proc/filesystems", "/proc/sys/kernel/ostype", "/proc/sys/kernel/pid_max",
            "/sys/kernel/mm/transparent_hugepage/enabled", "/sys/devices/system/cpu/online", "/sys/devices/system/cpu/possible"];
        string[] present = candidates.Where(File.Exists).ToArray();
        Assert.NotEmpty(present);
        var differences = new List<string>();
        foreach (string path in present)
        {
            differences.AddRange((await Differences(path, Encoding.UTF8)).Select(d => path + ": " + d));
        }
        Assert.True(differences.Count == 0, string.Join("\n", differences));
    }

    [Fact]
    public async Task Missing_files_directories_bad_paths_and_locked_files_fail_the_same()
    {
        Directory.CreateDirectory(_directory.File("dir"));
        string locked = _directory.File("locked");
        File.WriteAllText(locked, "held");
        using var holder = new FileStream(locked, FileMode.Open, FileAccess.ReadWrite, FileShare.None);
        string[] paths = [_directory.File("missing"), _directory.File("nodir/missing"), _directory.File("dir"), locked, "", "a\0b", _directory.File("locked/below")];
        var differences = new List<string>();
        foreach (string path in paths)
        {
            differences.AddRange((await Differences(path, Encoding.UTF8)).Select(d => $"'{path}': {d}"));
        }
        string expected = await ContentOutcome.Of(() => Task.FromResult(File.ReadAllText(null!)), ContentOutcome.Show);
        string actual = await ContentOutcome.Of(() => Task.FromResult(SpindleFile.ReadAllText(null!)), ContentOutcome.Show);
        Assert.Equal(expected, actual);
        Assert.Equal(await ContentOutcome.Of(() => File.ReadAllBytesAsync(null!), ContentOutcome.Show),
            await ContentOutcome.Of(() => SpindleFile.ReadAllBytesAsync(null!), ContentOutcome.Show));
        Assert.Equal(await ContentOutcome.Of(() => File.ReadAllTextAsync(locked, null!), ContentOutcome.Show),
            await ContentOutcome.Of(() => SpindleFile.ReadAllTextAsync(locked, null!), ContentOutcome.Show));
        Assert.True(differences.Count == 0, string.Join("\n", differences));
        Assert.Contains(await ContentOutcome.Of(() => SpindleFile.ReadAllBytesAsync(locked), ContentOutcome.Show), new[] { "faulted IOException hr=B", "thrown IOException hr=B" });
    }

    [Fact]
    public async Task A_file_larger_than_an_array_fails_ReadAllBytes_with_IOException_as_System_IO_does()
    {
        string path = _directory.File("sparse");
        using (var sparse = new FileStream(path, FileMode.Create))
        {
            sparse.SetLength(3L << 30); // a hole: no disk space used
        }
        Assert.Equal(await SystemBytes(path), await SpindleBytes(path));
        Assert.StartsWith("thrown IOException", await SpindleBytes(path));
    }

    [Fact]
    public async Task A_cancelled_token_cancels_every_asynchronous_read_as_in_System_IO()
    {
        string path = _directory.File("c");
        File.WriteAllText(path, "a\nb");
        var token = new CancellationToken(canceled: true);
        foreach (string target in new[] { path, _directory.File("missing") })
        {
            Assert.Equal(await ContentOutcome.Of(() => File.ReadAllBytesAsync(target, token), ContentOutcome.Show),
                await ContentOutcome.Of(() => SpindleFile.ReadAllBytesAsync(target, token), ContentOutcome.Show));
            Assert.Equal(await ContentOutcome.Of(() => File.ReadAllTextAsync(target, token), ContentOutcome.Show),
                await ContentOutcome.Of(() => SpindleFile.ReadAllTextAsync(target, token), ContentOutcome.Show));
            Assert.Equal(await ContentOutcome.Of(() => File.ReadAllLinesAsync(target, token), ContentOutcome.Show),
                await ContentOutcome.Of(() => SpindleFile.ReadAllLinesAsync(target, token), ContentOutcome.Show));
            Assert.Equal(OpenErrorsThroughTheTask(await ContentOutcome.Of(() => ContentOutcome.ToArrayAsync(File.ReadLinesAsync(target, token)), ContentOutcome.Show)),
                await ContentOutcome.Of(() => ContentOutcome.ToArrayAsync(SpindleFile.ReadLinesAsync(target, token)), ContentOutcome.Show));
        }
        Assert.StartsWith("canceled", await ContentOutcome.Of(() => SpindleFile.ReadAllBytesAsync(path, token), ContentOutcome.Show));
    }

    [Theory]
    [InlineData(0L)]
    [InlineData(1L << 20)]
    public async Task Files_partly_or_not_in_the_page_cache_read_the_same_and_leave_no_lock(long keptCached)
    {
        // A warm lookup opens on the caller's thread; the read then finds only part of the file (or none) cached and
        // goes to the engine (after the open's O_NONBLOCK is taken off the descriptor).
        string path = _directory.File("evicted");
        byte[] contents = new byte[2 << 20];
        new Random(7).NextBytes(contents);
        contents.AsSpan(0, 3).Clear(); // no byte order mark
        var differences = new List<string>();
        for (int round = 0; round < 2; round++)
        {
            string[] outcomes = new string[2];
            for (int side = 0; side < 2; side++)
            {
                using (var file = new FileStream(path, FileMode.Create, FileAccess.Write))
                {
                    file.Write(contents);
                    file.Flush(flushToDisk: true);
                    TestLibc.PosixFAdvise((int)file.SafeFileHandle.DangerousGetHandle(), keptCached, 0, TestLibc.POSIX_FADV_DONTNEED);
                }
                outcomes[side] = side == 0
                    ? await ContentOutcome.Of(() => File.ReadAllBytesAsync(path), ContentOutcome.Show) + " " + await ContentOutcome.Of(() => File.ReadAllTextAsync(path, Encoding.Latin1), ContentOutcome.Show)
                    : await ContentOutcome.Of(() => SpindleFile.ReadAllBytesAsync(path), ContentOutcome.Show) + " " + await ContentOutcome.Of(() => SpindleFile.ReadAllTextAsync(path, Encoding.Latin1), ContentOutcome.Show);
                // The read's lock is gone with its handle: an exclusive open succeeds, as after System.IO's read.
                using var exclusive = new FileStream(path, FileMode.Open, FileAccess.ReadWrite, FileShare.None);
            }
            if (outcomes[0] != outcomes[1])
            {
                differences.Add($"round {round}: System.IO {outcomes[0]}, Spindle {outcomes[1]}");
            }
        }
        Assert.True(differences.Count == 0, string.Join("\n", differences));
        Assert.StartsWith("ok " + ContentOutcome.Show(contents), (await ContentOutcome.Of(() => SpindleFile.ReadAllBytesAsync(path), ContentOutcome.Show)));
    }

    [Fact]
    public async Task ReadLines_opens_at_once_and_a_second_enumeration_reads_the_file_again()
    {
        string path = _directory.File("lines");
        File.WriteAllText(path, "one\ntwo\n");
        IEnumerable<string> lines = SpindleFile.ReadLines(path);
        IAsyncEnumerable<string> asyncLines = SpindleFile.ReadLinesAsync(path);
        Assert.Equal(["one", "two"], lines.ToArray());
        Assert.Equal(["one", "two"], await ContentOutcome.ToArrayAsync(asyncLines));
        File.WriteAllText(path, "three\n");
        Assert.Equal(["three"], lines.ToArray());
        Assert.Equal(["three"], await ContentOutcome.ToArrayAsync(asyncLines));
        Assert.Throws<FileNotFoundException>(() => SpindleFile.ReadLines(_directory.File("none")));
        string missing = await ContentOutcome.Of(() => ContentOutcome.ToArrayAsync(SpindleFile.ReadLinesAsync(_directory.File("none"))), ContentOutcome.Show);
        Assert.StartsWith(Spindle.Portable.PassThrough.Enabled ? "thrown FileNotFoundException" : "faulted FileNotFoundException", missing);
    }

    [Fact]
    public async Task ReadLinesAsync_does_not_hold_the_caller_while_the_open_waits()
    {
        // A FIFO's read end opens only once a writer is there: System.IO's ReadLinesAsync waits for it in the call.
        if (Spindle.Portable.PassThrough.Enabled || Spindle.Engines.EngineSelector.Default.Kind == IoEngine.Sync)
        {
            Console.WriteLine("the open is synchronous on this engine: nothing to show");
            return;
        }
        string path = _directory.File("fifo");
        TestLibc.CreateFifo(path);
        Task<IAsyncEnumerable<string>> call = Task.Run(() => SpindleFile.ReadLinesAsync(path));
        IAsyncEnumerable<string> lines;
        try
        {
            lines = await call.WaitAsync(TimeSpan.FromSeconds(30));
        }
        finally
        {
            // The writer's open also releases a call that did wait, so that a failure leaves no thread behind.
            await using var writer = new FileStream(path, FileMode.Open, FileAccess.Write);
            writer.Write("a\nb\n"u8);
        }
        Assert.Equal(["a", "b"], await ContentOutcome.ToArrayAsync(lines).WaitAsync(TimeSpan.FromSeconds(30)));
    }
}
