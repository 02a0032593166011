using Spindle.Tests.Infrastructure;
using Spindle.Tool.Bench;
using Spindle.Workloads;
using Spindle.Workloads.Beyond;
using Xunit.Abstractions;

namespace Spindle.Tests.Tool;

/// <summary>What makes a row's fio figure comparable: same moments (rounds), same buffers.</summary>
public class FioComparisonTests(ITestOutputHelper output)
{
    private static bool HasMemoryFileSystem => Directory.Exists("/dev/shm") && new DriveInfo("/dev/shm").DriveFormat == "tmpfs";

    [Fact]
    public void Fio_takes_its_buffers_from_the_memory_file_it_is_given()
    {
        var job = new FioJob("read", 1 << 20, "io_uring", 8, Direct: true, "/data/f", 1L << 28) { IoMemoryFile = "/dev/shm/b" };
        Assert.Equal(
            "fio --iomem=mmapshared:/dev/shm/b --name=spindle --filename=/data/f --rw=read --bs=1048576 --size=268435456 --ioengine=io_uring --iodepth=8 --direct=1 --invalidate=1 --runtime=250ms --time_based --output-format=json --lat_percentiles=1",
            job.CommandLine(TimeSpan.FromMilliseconds(250)));
        Assert.DoesNotContain((job with { IoMemoryFile = null }).Arguments(TimeSpan.FromSeconds(1)), a => a.StartsWith("--iomem", StringComparison.Ordinal));
    }

    [Fact]
    public void Shared_buffers_are_windows_of_one_file_laid_out_as_fio_lays_out_its_buffers()
    {
        using var dir = new TempDirectory();
        string path;
        using (var files = new BenchFiles(dir.Path))
        {
            using (SharedIoBuffers? buffers = SharedIoBuffers.TryCreate(files, 3, 8192))
            {
                if (!HasMemoryFileSystem)
                {
                    Assert.Null(buffers);
                    output.WriteLine("no tmpfs at /dev/shm: the rows keep their own buffers");
                    return;
                }
                Assert.NotNull(buffers);
                path = buffers.Path;
                Assert.Equal(3 * 8192 + Environment.SystemPageSize, new FileInfo(path).Length);
                for (int i = 0; i < 3; i++)
                {
                    Assert.All(buffers[i].ToArray(), b => Assert.Equal(0x5A, b));
                    buffers[i].Span.Fill((byte)(i + 1));
                }
                // What the buffers hold is what another process mapping the file sees, at i × size.
                byte[] content = File.ReadAllBytes(path);
                for (int i = 0; i < 3; i++)
                {
                    Assert.All(content.AsSpan(i * 8192, 8192).ToArray(), b => Assert.Equal(i + 1, b));
                }
            }
            Assert.True(File.Exists(path));
        }
        Assert.False(File.Exists(path)); // the bench files own it, like every file a row creates
    }

    [Fact]
    public async Task A_sequential_row_reads_into_the_pages_fio_is_given()
    {
        using var dir = new TempDirectory();
        using var files = new BenchFiles(dir.Path);
        const int block = 64 << 10;
        using var row = new SequentialDirect(Direction.Read, 16L * block, block, 8);
        try
        {
            row.Setup(files);
        }
        catch (NotSupportedException e)
        {
            output.WriteLine($"skipped: {e.Message}");
            return;
        }
        if (!HasMemoryFileSystem)
        {
            Assert.Null(row.Fio!.IoMemoryFile);
            output.WriteLine("no tmpfs at /dev/shm: fio allocates its own buffers");
            return;
        }
        string memory = row.Fio!.IoMemoryFile!;
        string source = row.Fio.FileName;
        foreach (Contender contender in new[] { Contender.SystemIO, Contender.SpindleAuto })
        {
            using (var clear = File.OpenHandle(memory, FileMode.Open, FileAccess.Write, FileShare.ReadWrite))
            {
                System.IO.RandomAccess.Write(clear, new byte[new FileInfo(memory).Length], 0); // the mapping sees the same pages
            }
            await row.RunAsync(contender);
            // Worker k read blocks k and k + 8, the last into window k of the shared file.
            byte[] expected = File.ReadAllBytes(source);
            byte[] shared = File.ReadAllBytes(memory);
            for (int k = 0; k < 8; k++)
            {
                Assert.True(expected.AsSpan((k + 8) * block, block).SequenceEqual(shared.AsSpan(k * block, block)), $"{contender}, window {k}");
            }
        }
    }

    [Fact]
    public async Task The_harness_gives_fio_a_turn_in_every_round_in_the_rotation()
    {
        using var row = new TurnLog();
        var settings = new HarnessSettings(3, TimeSpan.Zero, TimeSpan.Zero, TimeSpan.FromSeconds(1));
        IReadOnlyList<ContenderResult> results = await Harness.MeasureAsync(row, settings, CancellationToken.None, _ =>
        {
            row.Turns.Add("fio");
            return Task.CompletedTask;
        });

        Assert.Equal(2, results.Count);
        // Warm-up first (two runs each), then one batch of one invocation per turn, the order rotating.
        string[] measured = [.. row.Turns.Skip(4)];
        Assert.Equal(["SystemIO", "SpindleAuto", "fio", "SpindleAuto", "fio", "SystemIO", "fio", "SystemIO", "SpindleAuto"], measured);
    }

    [Fact]
    public async Task Fio_rounds_report_the_round_with_the_median_rate()
    {
        using var dir = new TempDirectory();
        string fio = FakeFio(dir, "echo \"$n\" > \"$counter\"; case $n in 1) iops=300;; 2) iops=100;; *) iops=200;; esac\n"
            + "echo \"{\\\"jobs\\\":[{\\\"usr_cpu\\\":1,\\\"sys_cpu\\\":1,\\\"job_runtime\\\":1000,\\\"read\\\":{\\\"iops\\\":$iops,\\\"bw_bytes\\\":$((iops*4096)),\\\"total_ios\\\":$iops}}]}\"");
        var rounds = new FioRounds(fio, new FioJob("read", 4096, "psync", 1, Direct: false, dir.File("f"), 4096), TimeSpan.FromSeconds(1));

        for (int i = 0; i < 3; i++)
        {
            await rounds.RunAsync(CancellationToken.None);
        }

        Assert.Null(rounds.Failure);
        Assert.Equal(200, rounds.Median!.Iops);
        Assert.Equal(200 * 4096, rounds.Median.BytesPerSecond);
        Assert.Equal("3", File.ReadAllText(dir.File("counter")).Trim());
    }

    [Fact]
    public async Task A_fio_that_fails_is_reported_and_not_run_again()
    {
        using var dir = new TempDirectory();
        string fio = FakeFio(dir, "echo \"$n\" > \"$counter\"; echo 'fio: unrecognized option' >&2; exit 1");
        var rounds = new FioRounds(fio, new FioJob("read", 4096, "psync", 1, Direct: false, dir.File("f"), 4096), TimeSpan.FromSeconds(1));

        for (int i = 0; i < 3; i++)
        {
            await rounds.RunAsync(CancellationToken.None);
        }

        Assert.Equal("fio failed: fio: unrecognized option", rounds.Failure);
        Assert.Null(rounds.Median);
        Assert.Equal("1", File.ReadAllText(dir.File("counter")).Trim());
    }

    // A shell script standing in for fio: counts its runs in a file, then runs body.
    private static string FakeFio(TempDirectory dir, string body)
    {
        string path = dir.File("fio");
        string counter = dir.File("counter");
        File.WriteAllText(path, $"#!/bin/sh\ncounter='{counter}'\nn=$(( $(cat \"$counter\" 2>/dev/null || echo 0) + 1 ))\n{body}\n");
        File.SetUnixFileMode(path, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        return path;
    }

    // A row that only logs who runs it; each contender's turn is one batch of one invocation.
    private sealed class TurnLog() : Workload("Test", "TurnLog")
    {
        public List<string> Turns { get; } = [];

        public override IReadOnlyList<Contender> Contenders => Workloads.Contenders.Synchronous;

        public override void Setup(BenchFiles files)
        {
        }

        public override ValueTask RunAsync(Contender contender)
        {
            Turns.Add(contender.ToString());
            return default;
        }
    }
}
