using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Tool;

public class CopyCommandTests
{
    [Fact]
    public void Copy_makes_a_byte_identical_file_and_reports_size_time_and_throughput()
    {
        using var dir = new TempDirectory();
        byte[] data = new byte[3 * 1024 * 1024 + 123];
        new Random(7).NextBytes(data);
        File.WriteAllBytes(dir.File("src.bin"), data);

        ToolRunner.Result result = ToolRunner.Run("copy", dir.File("src.bin"), dir.File("dst.bin"));

        Assert.True(result.ExitCode == 0, result.Error);
        Assert.Equal(data, File.ReadAllBytes(dir.File("dst.bin")));
        Assert.Matches(@"^copied 3 MiB \(3145851 bytes\) in [\d.]+ s, [\d.]+ MiB/s", result.Out.Trim());
    }

    [Fact]
    public void Copy_refuses_an_existing_destination_without_overwrite_and_replaces_it_with()
    {
        using var dir = new TempDirectory();
        File.WriteAllText(dir.File("src.txt"), "new content");
        File.WriteAllText(dir.File("dst.txt"), "old");

        ToolRunner.Result refused = ToolRunner.Run("copy", dir.File("src.txt"), dir.File("dst.txt"));
        Assert.Equal(1, refused.ExitCode);
        Assert.Equal("old", File.ReadAllText(dir.File("dst.txt")));

        ToolRunner.Result replaced = ToolRunner.Run("copy", dir.File("src.txt"), dir.File("dst.txt"), "--overwrite");
        Assert.Equal(0, replaced.ExitCode);
        Assert.Equal("new content", File.ReadAllText(dir.File("dst.txt")));
    }

    [Fact]
    public void Copy_of_a_missing_source_fails_with_one_line()
    {
        using var dir = new TempDirectory();
        ToolRunner.Result result = ToolRunner.Run("copy", dir.File("missing.bin"), dir.File("dst.bin"));
        Assert.Equal(1, result.ExitCode);
        Assert.Equal($"spindle copy: source not found: {dir.File("missing.bin")}", result.Error.Trim());
        Assert.False(File.Exists(dir.File("dst.bin")));
    }

    [Fact]
    public void Copy_to_a_read_only_file_system_fails_with_one_line()
    {
        using var dir = new TempDirectory("/work");
        File.WriteAllText(dir.File("src.txt"), "data");
        Directory.CreateDirectory(dir.File("ro"));
        using var readOnly = SmallTmpfs.TryMount(dir.File("ro"), "1m", readOnly: true);
        if (readOnly is null)
        {
            Console.WriteLine("skipped: mount -t tmpfs -o ro refused");
            return;
        }
        ToolRunner.Result result = ToolRunner.Run("copy", dir.File("src.txt"), Path.Combine(dir.File("ro"), "dst.txt"));

        Assert.Equal(1, result.ExitCode);
        Assert.StartsWith("spindle copy: ", result.LastErrorLine());
        Assert.Single(result.Error.Trim().Split('\n'));
    }

    [Fact]
    public void Copy_of_a_directory_is_refused_with_one_line()
    {
        using var dir = new TempDirectory();
        ToolRunner.Result result = ToolRunner.Run("copy", dir.Path, dir.File("dst"));
        Assert.Equal(1, result.ExitCode);
        Assert.Equal($"spindle copy: source is a directory: {dir.Path}", result.Error.Trim());
    }

    [Fact]
    public void Copy_help_and_missing_arguments()
    {
        Assert.Equal(0, ToolRunner.Run("copy", "--help").ExitCode);
        Assert.Equal(2, ToolRunner.Run("copy", "only-one").ExitCode);
    }

    [Theory]
    [InlineData("")]
    [InlineData("/")]
    public void Copy_into_an_existing_directory_puts_the_file_there_under_its_name_like_cp(string slash)
    {
        using var dir = new TempDirectory();
        File.WriteAllText(dir.File("big.bin"), "payload");
        Directory.CreateDirectory(dir.File("into"));

        ToolRunner.Result result = ToolRunner.Run("copy", dir.File("big.bin"), dir.File("into") + slash);

        Assert.True(result.ExitCode == 0, result.Error);
        Assert.Equal("payload", File.ReadAllText(Path.Combine(dir.File("into"), "big.bin")));
        // The same rule applies to an existing file inside: refused without --overwrite.
        ToolRunner.Result again = ToolRunner.Run("copy", dir.File("big.bin"), dir.File("into") + slash);
        Assert.Equal(1, again.ExitCode);
        Assert.Equal($"spindle copy: destination exists: {Path.Combine(dir.File("into"), "big.bin")} (--overwrite replaces it)", again.Error.Trim());
    }

    [Fact]
    public void Copy_to_a_missing_directory_named_with_a_slash_fails_with_one_line()
    {
        using var dir = new TempDirectory();
        File.WriteAllText(dir.File("src.txt"), "data");
        ToolRunner.Result result = ToolRunner.Run("copy", dir.File("src.txt"), dir.File("nowhere") + "/");
        Assert.Equal(1, result.ExitCode);
        Assert.Equal($"spindle copy: destination directory not found: {dir.File("nowhere")}/", result.Error.Trim());
        Assert.False(File.Exists(dir.File("nowhere")));
    }

    [Fact]
    public void Copy_from_a_pipe_copies_or_reports_the_failure_itself_never_an_existing_destination()
    {
        // What `spindle copy <(head -c 1M /dev/zero) out.bin` meets: the source is a pipe, the destination is new.
        using var dir = new TempDirectory();
        string fifo = dir.File("source.fifo");
        TestLibc.CreateFifo(fifo);
        byte[] data = new byte[1 << 20];
        new Random(3).NextBytes(data);
        Task writer = Task.Run(() =>
        {
            using var stream = new FileStream(fifo, FileMode.Open, FileAccess.Write);
            try
            {
                stream.Write(data);
            }
            catch (IOException)
            {
                // The copy gave up and closed its end.
            }
        });

        ToolRunner.Result result = ToolRunner.Run("copy", fifo, dir.File("out.bin"));
        Assert.True(writer.Wait(TimeSpan.FromSeconds(30)) || OpenAndClose(fifo, writer));

        if (result.ExitCode == 0)
        {
            Assert.Equal(data, File.ReadAllBytes(dir.File("out.bin")));
            return;
        }
        Assert.Equal(1, result.ExitCode);
        Assert.DoesNotContain("destination exists", result.Error);
        Assert.StartsWith($"spindle copy: copying {fifo} to {dir.File("out.bin")} failed: ", result.Error.Trim());
        Assert.Single(result.Error.Trim().Split('\n'));
    }

    // A copy that failed before opening the pipe leaves the writer waiting for a reader: give it one.
    private static bool OpenAndClose(string fifo, Task writer)
    {
        using (new FileStream(fifo, FileMode.Open, FileAccess.Read))
        {
        }
        return writer.Wait(TimeSpan.FromSeconds(30));
    }
}
