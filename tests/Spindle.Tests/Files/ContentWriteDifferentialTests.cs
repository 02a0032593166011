using System.Text;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Files;

/// <summary>
/// SpindleFile's writes against System.IO.File's: each write twin runs on one of two identical directories, from
/// the same starting state (no file, a file with text, a directory, a missing directory, a file held exclusively),
/// and must give the same outcome and leave the same bytes on disk.
/// </summary>
public class ContentWriteDifferentialTests : IDisposable
{
    private readonly TempDirectory _systemIO = new();
    private readonly TempDirectory _spindle = new();

    public void Dispose()
    {
        _systemIO.Dispose();
        _spindle.Dispose();
    }

    private sealed record Write(string Name, Func<string, Task> SystemIO, Func<string, Task> Spindle);

    private static Task Sync(Action action)
    {
        action();
        return Task.CompletedTask;
    }

    private static IEnumerable<Write> Writes(byte[] bytes, string? text, Encoding encoding, CancellationToken token)
    {
        string[] lines = text is null ? [] : text.Split('\n');
        IEnumerable<string> lazy = lines.Select(line => line);
        yield return new("WriteAllBytes[]", p => Sync(() => File.WriteAllBytes(p, bytes)), p => Sync(() => SpindleFile.WriteAllBytes(p, bytes)));
        yield return new("WriteAllBytes span", p => Sync(() => File.WriteAllBytes(p, bytes.AsSpan())), p => Sync(() => SpindleFile.WriteAllBytes(p, bytes.AsSpan())));
        yield return new("WriteAllBytesAsync[]", p => File.WriteAllBytesAsync(p, bytes, token), p => SpindleFile.WriteAllBytesAsync(p, bytes, token));
        yield return new("WriteAllBytesAsync memory", p => File.WriteAllBytesAsync(p, bytes.AsMemory(), token), p => SpindleFile.WriteAllBytesAsync(p, bytes.AsMemory(), token));
        yield return new("AppendAllBytes[]", p => Sync(() => File.AppendAllBytes(p, bytes)), p => Sync(() => SpindleFile.AppendAllBytes(p, bytes)));
        yield return new("AppendAllBytes span", p => Sync(() => File.AppendAllBytes(p, bytes.AsSpan())), p => Sync(() => SpindleFile.AppendAllBytes(p, bytes.AsSpan())));
        yield return new("AppendAllBytesAsync[]", p => File.AppendAllBytesAsync(p, bytes, token), p => SpindleFile.AppendAllBytesAsync(p, bytes, token));
        yield return new("AppendAllBytesAsync memory", p => File.AppendAllBytesAsync(p, bytes.AsMemory(), token), p => SpindleFile.AppendAllBytesAsync(p, bytes.AsMemory(), token));
        yield return new("WriteAllText", p => Sync(() => File.WriteAllText(p, text)), p => Sync(() => SpindleFile.WriteAllText(p, text)));
        yield return new("WriteAllText span", p => Sync(() => File.WriteAllText(p, text.AsSpan())), p => Sync(() => SpindleFile.WriteAllText(p, text.AsSpan())));
        yield return new("WriteAllText encoding", p => Sync(() => File.WriteAllText(p, text, encoding)), p => Sync(() => SpindleFile.WriteAllText(p, text, encoding)));
        yield return new("WriteAllText span encoding", p => Sync(() => File.WriteAllText(p, text.AsSpan(), encoding)), p => Sync(() => SpindleFile.WriteAllText(p, text.AsSpan(), encoding)));
        yield return new("WriteAllTextAsync", p => File.WriteAllTextAsync(p, text, token), p => SpindleFile.WriteAllTextAsync(p, text, token));
        yield return new("WriteAllTextAsync memory", p => File.WriteAllTextAsync(p, text.AsMemory(), token), p => SpindleFile.WriteAllTextAsync(p, text.AsMemory(), token));
        yield return new("WriteAllTextAsync encoding", p => File.WriteAllTextAsync(p, text, encoding, token), p => SpindleFile.WriteAllTextAsync(p, text, encoding, token));
        yield return new("WriteAllTextAsync memory encoding", p => File.WriteAllTextAsync(p, text.AsMemory(), encoding, token), p => SpindleFile.WriteAllTextAsync(p, text.AsMemory(), encoding, token));
        yield return new("AppendAllText", p => Sync(() => File.AppendAllText(p, text)), p => Sync(() => SpindleFile.AppendAllText(p, text)));
        yield return new("AppendAllText span", p => Sync(() => File.AppendAllText(p, text.AsSpan())), p => Sync(() => SpindleFile.AppendAllText(p, text.AsSpan())));
        yield return new("AppendAllText encoding", p => Sync(() => File.AppendAllText(p, text, encoding)), p => Sync(() => SpindleFile.AppendAllText(p, text, encoding)));
        yield return new("AppendAllText span encoding", p => Sync(() => File.AppendAllText(p, text.AsSpan(), encoding)), p => Sync(() => SpindleFile.AppendAllText(p, text.AsSpan(), encoding)));
        yield return new("AppendAllTextAsync", p => File.AppendAllTextAsync(p, text, token), p => SpindleFile.AppendAllTextAsync(p, text, token));
        yield return new("AppendAllTextAsync memory", p => File.AppendAllTextAsync(p, text.AsMemory(), token), p => SpindleFile.AppendAllTextAsync(p, text.AsMemory(), token));
        yield return new("AppendAllTextAsync encoding", p => File.AppendAllTextAsync(p, text, encoding, token), p => SpindleFile.AppendAllTextAsync(p, text, encoding, token));
        yield return new("AppendAllTextAsync memory encoding", p => File.AppendAllTextAsync(p, text.AsMemory(), encoding, token), p => SpindleFile.AppendAllTextAsync(p, text.AsMemory(), encoding, token));
        yield return new("WriteAllLines[]", p => Sync(() => File.WriteAllLines(p, lines)), p => Sync(() => SpindleFile.WriteAllLines(p, lines)));
        yield return new("WriteAllLines", p => Sync(() => File.WriteAllLines(p, lazy)), p => Sync(() => SpindleFile.WriteAllLines(p, lazy)));
        yield return new("WriteAllLines[] encoding", p => Sync(() => File.WriteAllLines(p, lines, encoding)), p => Sync(() => SpindleFile.WriteAllLines(p, lines, encoding)));
        yield return new("WriteAllLines encoding", p => Sync(() => File.WriteAllLines(p, lazy, encoding)), p => Sync(() => SpindleFile.WriteAllLines(p, lazy, encoding)));
        yield return new("WriteAllLinesAsync", p => File.WriteAllLinesAsync(p, lazy, token), p => SpindleFile.WriteAllLinesAsync(p, lazy, token));
        yield return new("WriteAllLinesAsync encoding", p => File.WriteAllLinesAsync(p, lazy, encoding, token), p => SpindleFile.WriteAllLinesAsync(p, lazy, encoding, token));
        yield return new("AppendAllLines", p => Sync(() => File.AppendAllLines(p, lazy)), p => Sync(() => SpindleFile.AppendAllLines(p, lazy)));
        yield return new("AppendAllLines encoding", p => Sync(() => File.AppendAllLines(p, lazy, encoding)), p => Sync(() => SpindleFile.AppendAllLines(p, lazy, encoding)));
        yield return new("AppendAllLinesAsync", p => File.AppendAllLinesAsync(p, lazy, token), p => SpindleFile.AppendAllLinesAsync(p, lazy, token));
        yield return new("AppendAllLinesAsync encoding", p => File.AppendAllLinesAsync(p, lazy, encoding, token), p => SpindleFile.AppendAllLinesAsync(p, lazy, encoding, token));
    }

    /// <summary>The starting states of the target path, each made in a directory.</summary>
    private static readonly (string Name, Func<string, string> Prepare)[] s_states =
    [
        ("no file", directory => Path.Combine(directory, "f")),
        ("a file with text", directory => { string p = Path.Combine(directory, "f"); File.WriteAllText(p, "before\n"); return p; }),
        ("a file with a UTF-16 mark", directory => { string p = Path.Combine(directory, "f"); File.WriteAllText(p, "x", Encoding.Unicode); return p; }),
        ("an empty file", directory => { string p = Path.Combine(directory, "f"); File.WriteAllBytes(p, []); return p; }),
        ("a directory", directory => Directory.CreateDirectory(Path.Combine(directory, "d")).FullName),
        ("a missing directory", directory => Path.Combine(directory, "none", "f")),
        ("a file named with a trailing slash", directory => { string p = Path.Combine(directory, "f"); File.WriteAllText(p, "before\n"); return p + "/"; }),
        ("a directory that refuses creation", _ => "/proc/self/spindle-refused"),
    ];

    private async Task<List<string>> Differences(byte[] bytes, string? text, Encoding encoding, CancellationToken token = default)
    {
        var differences = new List<string>();
        foreach (Write write in Writes(bytes, text, encoding, token))
        {
            foreach (var (state, prepare) in s_states)
            {
                string systemPath = prepare(Reset(_systemIO.Path)), spindlePath = prepare(Reset(_spindle.Path));
                string expected = await ContentOutcome.Of(() => write.SystemIO(systemPath)) + " -> " + ContentOutcome.OnDisk(systemPath);
                string actual = await ContentOutcome.Of(() => write.Spindle(spindlePath)) + " -> " + ContentOutcome.OnDisk(spindlePath);
                if (expected != actual)
                {
                    differences.Add($"{write.Name} ({encoding.WebName}, preamble {encoding.Preamble.Length}) on {state}: System.IO {expected}, Spindle {actual}");
                }
            }
        }
        return differences;
    }

    private static string Reset(string directory)
    {
        foreach (string entry in Directory.EnumerateFileSystemEntries(directory))
        {
            if (Directory.Exists(entry))
            {
                Directory.Delete(entry, recursive: true);
            }
            else
            {
                File.Delete(entry);
            }
        }
        return directory;
    }

    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(4096)]
    [InlineData(4097)]
    [InlineData(8193)]
    [InlineData(30_000)]
    public async Task Every_write_twin_leaves_the_same_bytes_and_outcome_in_every_encoding(int length)
    {
        var random = new Random(length);
        byte[] bytes = new byte[length];
        random.NextBytes(bytes);
        string text = ContentReadDifferentialTests.RandomText(random, length);
        var differences = new List<string>();
        foreach (Encoding encoding in ContentReadDifferentialTests.Encodings)
        {
            differences.AddRange(await Differences(bytes, text, encoding));
        }
        Assert.True(differences.Count == 0, string.Join("\n", differences));
    }

    [Fact]
    public async Task Null_text_and_empty_lines_write_the_preamble_as_System_IO_does()
    {
        var differences = new List<string>();
        foreach (Encoding encoding in ContentReadDifferentialTests.Encodings)
        {
            differences.AddRange(await Differences([], null, encoding));
            differences.AddRange(await Differences([], "", encoding));
        }
        Assert.True(differences.Count == 0, string.Join("\n", differences));
    }

    [Fact]
    public async Task A_cancelled_token_cancels_every_asynchronous_write_as_in_System_IO()
    {
        var differences = await Differences([1, 2, 3], "abc", Encoding.UTF8, new CancellationToken(canceled: true));
        Assert.True(differences.Count == 0, string.Join("\n", differences));
    }

    [Fact]
    public async Task A_file_held_exclusively_fails_every_write_the_same()
    {
        string systemPath = Path.Combine(_systemIO.Path, "held"), spindlePath = Path.Combine(_spindle.Path, "held");
        File.WriteAllText(systemPath, "held");
        File.WriteAllText(spindlePath, "held");
        var differences = new List<string>();
        using (var systemHolder = new FileStream(systemPath, FileMode.Open, FileAccess.ReadWrite, FileShare.None))
        using (var spindleHolder = new FileStream(spindlePath, FileMode.Open, FileAccess.ReadWrite, FileShare.None))
        {
            foreach (Write write in Writes([1], "x", Encoding.UTF8, default))
            {
                string expected = await ContentOutcome.Of(() => write.SystemIO(systemPath));
                string actual = await ContentOutcome.Of(() => write.Spindle(spindlePath));
                if (expected != actual)
                {
                    differences.Add($"{write.Name}: System.IO {expected}, Spindle {actual}");
                }
            }
        }
        Assert.True(differences.Count == 0, string.Join("\n", differences));
        Assert.Equal("held", File.ReadAllText(spindlePath));
        Assert.Equal("held", File.ReadAllText(systemPath));
    }

    [Fact]
    public async Task Lines_that_throw_midway_leave_the_lines_before_them_as_System_IO_does()
    {
        static IEnumerable<string> Failing()
        {
            yield return "first";
            yield return new string('x', 50_000);
            throw new InvalidOperationException("no more lines");
        }
        string systemPath = Path.Combine(_systemIO.Path, "lines"), spindlePath = Path.Combine(_spindle.Path, "lines");
        Assert.Equal(await ContentOutcome.Of(() => Sync(() => File.WriteAllLines(systemPath, Failing()))) + ContentOutcome.OnDisk(systemPath),
            await ContentOutcome.Of(() => Sync(() => SpindleFile.WriteAllLines(spindlePath, Failing()))) + ContentOutcome.OnDisk(spindlePath));
        Assert.Equal(await ContentOutcome.Of(() => File.AppendAllLinesAsync(systemPath, Failing(), Encoding.Unicode)) + ContentOutcome.OnDisk(systemPath),
            await ContentOutcome.Of(() => SpindleFile.AppendAllLinesAsync(spindlePath, Failing(), Encoding.Unicode)) + ContentOutcome.OnDisk(spindlePath));
        Assert.Equal(new FileInfo(systemPath).Length, new FileInfo(spindlePath).Length);
    }

    [Fact]
    public async Task A_throwing_encoder_with_a_preamble_leaves_what_System_IO_leaves()
    {
        // Each encoder throws on the lone surrogate of the second line, after the preamble and the first line were encoded.
        Encoding[] throwing = [new UTF8Encoding(true, true), new UnicodeEncoding(false, true, true), new UTF32Encoding(false, true, true), new UTF8Encoding(false, true)];
        var differences = new List<string>();
        foreach (Encoding encoding in throwing)
        {
            differences.AddRange(await Differences([1], "first\n\uD800 lone\nlast", encoding));
            differences.AddRange(await Differences([1], "\uDC00", encoding));
        }
        Assert.True(differences.Count == 0, string.Join("\n", differences));
    }

    [Fact]
    public async Task Invalid_text_past_the_first_chunk_leaves_what_System_IO_leaves()
    {
        // The default UTF-8 throws on a lone surrogate; System.IO has then written the 8192-character chunks before it.
        string text = new string('a', 20_000) + "\uD800" + "tail";
        string systemPath = Path.Combine(_systemIO.Path, "t"), spindlePath = Path.Combine(_spindle.Path, "t");
        foreach (FileMode mode in new[] { FileMode.Create, FileMode.Append })
        {
            string expected = await ContentOutcome.Of(() => mode == FileMode.Create ? File.WriteAllTextAsync(systemPath, text) : File.AppendAllTextAsync(systemPath, text));
            string actual = await ContentOutcome.Of(() => mode == FileMode.Create ? SpindleFile.WriteAllTextAsync(spindlePath, text) : SpindleFile.AppendAllTextAsync(spindlePath, text));
            Assert.Equal(expected + ContentOutcome.OnDisk(systemPath), actual + ContentOutcome.OnDisk(spindlePath));
            expected = await ContentOutcome.Of(() => Sync(() => File.AppendAllText(systemPath, text)));
            actual = await ContentOutcome.Of(() => Sync(() => SpindleFile.AppendAllText(spindlePath, text)));
            Assert.Equal(expected + ContentOutcome.OnDisk(systemPath), actual + ContentOutcome.OnDisk(spindlePath));
        }
    }

    [Fact]
    public async Task Null_arguments_fail_the_same()
    {
        var differences = new List<string>();
        foreach (Write write in Writes(null!, "x", null!, default).Where(w => w.Name.Contains("encoding") || w.Name.Contains("Bytes")))
        {
            string expected = await ContentOutcome.Of(() => write.SystemIO(Path.Combine(_systemIO.Path, "n")));
            string actual = await ContentOutcome.Of(() => write.Spindle(Path.Combine(_spindle.Path, "n")));
            if (expected != actual)
            {
                differences.Add($"{write.Name}: System.IO {expected}, Spindle {actual}");
            }
        }
        foreach (Write write in Writes([1], "x", Encoding.UTF8, default))
        {
            foreach (string? path in new[] { null, "" })
            {
                string expected = await ContentOutcome.Of(() => write.SystemIO(path!));
                string actual = await ContentOutcome.Of(() => write.Spindle(path!));
                if (expected != actual)
                {
                    differences.Add($"{write.Name} path '{path}': System.IO {expected}, Spindle {actual}");
                }
            }
        }
        Assert.True(differences.Count == 0, string.Join("\n", differences));
    }

    [Fact]
    public async Task The_line_writes_do_not_hold_the_caller_while_the_open_waits()
    {
        // A FIFO's write end opens only once a reader is there: System.IO's WriteAllLinesAsync waits for it in the call.
        if (Spindle.Portable.PassThrough.Enabled || Spindle.Engines.EngineSelector.Default.Kind == IoEngine.Sync)
        {
            Console.WriteLine("the open is synchronous on this engine: nothing to show");
            return;
        }
        foreach (bool append in new[] { false, true })
        {
            string path = Path.Combine(_spindle.Path, append ? "append-fifo" : "fifo");
            TestLibc.CreateFifo(path);
            string[] lines = ["a", "b"];
            Task<Task> call = Task.Factory.StartNew(() => append ? SpindleFile.AppendAllLinesAsync(path, lines) : SpindleFile.WriteAllLinesAsync(path, lines),
                CancellationToken.None, TaskCreationOptions.None, TaskScheduler.Default);
            Task written;
            byte[] read;
            try
            {
                written = await call.WaitAsync(TimeSpan.FromSeconds(30));
            }
            finally
            {
                // The reader's open also releases a call that did wait, so that a failure leaves no thread behind.
                using var reader = new FileStream(path, FileMode.Open, FileAccess.Read);
                var all = new MemoryStream();
                await reader.CopyToAsync(all).WaitAsync(TimeSpan.FromSeconds(30));
                read = all.ToArray();
            }
            await written.WaitAsync(TimeSpan.FromSeconds(30));
            Assert.Equal(Encoding.UTF8.GetBytes("a" + Environment.NewLine + "b" + Environment.NewLine), read);
        }
    }
}
