using System.Globalization;
using System.Text.Json;
using Spindle.Tests.Infrastructure;
using Spindle.Tool.Bench;
using Spindle.Workloads.Dispatch;
using Xunit.Abstractions;

namespace Spindle.Tests.Tool;

public class DispatchMatrixTests(ITestOutputHelper output)
{
    [Fact]
    public void The_full_matrix_has_every_storage_depth_spin_and_core_count_once_and_quick_a_small_all_core_subset()
    {
        IReadOnlyList<DispatchCell> full = DispatchMatrix.Build(quick: false);
        // The issue's four storages × 4 depths × 4 spins × 2 core counts, then three storages where io_uring only has
        // its workers (tmpfs's page cache, FUSE) × 4 depths × 2 spins × 2 core counts.
        Assert.Equal(4 * 4 * 4 * 2 + 3 * 4 * 2 * 2, full.Count);
        Assert.Equal(DispatchMatrix.Storages, full.Take(128).Select(c => c.Storage).Distinct());
        Assert.All(full.Take(128), c => Assert.Contains(c.SpinMicroseconds, DispatchMatrix.Spins));
        Assert.Equal(DispatchMatrix.ExtraStorages, full.Skip(128).Select(c => c.Storage).Distinct());
        Assert.Equal([0, 100], full.Skip(128).Select(c => c.SpinMicroseconds).Distinct().Order());
        Assert.Equal(full.Count, full.Select(c => c.Name).Distinct().Count());
        Assert.All(full, c => Assert.StartsWith("Dispatch/", c.Name, StringComparison.Ordinal));
        Assert.Equal([1, 8, 32, 128], full.Select(c => c.InFlight).Distinct().Order());
        Assert.Equal([0, 20, 100, 500], full.Select(c => c.SpinMicroseconds).Distinct().Order());
        Assert.Equal(Enum.GetValues<DispatchStorage>(), full.Select(c => c.Storage).Distinct().Order());
        // Each one-core cell follows its all-cores partner, so the scaling pair is measured minutes apart at most.
        for (int i = 0; i < full.Count; i += 2)
        {
            Assert.False(full[i].OneCore);
            Assert.Equal(full[i].Partner(), full[i + 1]);
        }
        Assert.Equal("Dispatch/tmpfs-direct/qd32/spin100us/allcores", new DispatchCell(DispatchStorage.TmpfsDirect, 32, 100, OneCore: false).Name);

        IReadOnlyList<DispatchCell> quick = DispatchMatrix.Build(quick: true);
        Assert.Equal(9, quick.Count);
        Assert.All(quick, c => Assert.False(c.OneCore));
        Assert.Equal([DispatchStorage.DiskDirect, DispatchStorage.TmpfsDirect, DispatchStorage.TmpfsCached], quick.Select(c => c.Storage).Distinct().Order());
        Assert.Equal([1, 32], quick.Select(c => c.InFlight).Distinct().Order());
        Assert.Equal([0, 100], quick.Select(c => c.SpinMicroseconds).Distinct().Order());
    }

    [Fact]
    public void Filter_selects_the_whole_matrix_a_storage_or_one_cell_also_under_quick()
    {
        Assert.Equal(176, DispatchSection.Select(quick: false, "Dispatch*").Count);
        Assert.Equal(176, DispatchSection.Select(quick: false, null).Count);
        Assert.Equal(9, DispatchSection.Select(quick: true, null).Count);
        IReadOnlyList<DispatchCell> tmpfs = DispatchSection.Select(quick: false, "Dispatch/tmpfs-direct*");
        Assert.Equal(32, tmpfs.Count);
        Assert.All(tmpfs, c => Assert.Equal(DispatchStorage.TmpfsDirect, c.Storage));
        Assert.Equal(48, DispatchSection.Select(quick: false, "Dispatch/tmpfs*").Count);
        // A filter draws from the whole matrix even with --quick (which then only shortens the rounds).
        Assert.Equal([new DispatchCell(DispatchStorage.ZramDirect, 8, 20, OneCore: true)],
            DispatchSection.Select(quick: true, "Dispatch/zram-direct/qd8/spin20us/1core"));
        Assert.Empty(DispatchSection.Select(quick: false, "RandomRead4K*"));

        ToolRunner.Result listed = ToolRunner.Run("bench", "--list", "--filter", "Dispatch/pagecache/qd1/*");
        Assert.Equal(0, listed.ExitCode);
        Assert.Equal(8, listed.Out.Split('\n', StringSplitOptions.RemoveEmptyEntries).Length);
        Assert.Contains("Dispatch/pagecache/qd1/spin500us/1core", listed.Out);
    }

    [Fact]
    public void The_spin_is_calibrated_on_thread_cpu_time_and_scales_with_the_microseconds()
    {
        double rate = CpuSpin.Calibrate(trials: 3, trialMicroseconds: 1000);
        Assert.True(double.IsFinite(rate) && rate > 0, $"rate {rate}");
        Assert.Equal(0, CpuSpin.Iterations(0, rate));
        Assert.Equal(CpuSpin.Iterations(500, rate), 25 * CpuSpin.Iterations(20, rate), tolerance: 25);
        // The check runs the calibrated spin and reads the thread's CPU clock: a positive figure (its size is the report's).
        double check = CpuSpin.Check(100, rate);
        output.WriteLine($"{rate:0.0} iterations/µs; a 100 µs spin took {check / 1000:0.0} µs of thread CPU");
        Assert.True(double.IsFinite(check) && check > 0);
        Assert.Throws<ArgumentOutOfRangeException>(() => CpuSpin.Calibrate(trials: 0));
    }

    [Fact]
    public void A_tiny_run_reports_every_column_and_target_for_all_cores_and_a_pinned_child()
    {
        using var dir = new TempDirectory();
        const string Cells = "Dispatch/pagecache/qd8/spin0us/*|Dispatch/pagecache/qd8/spin20us/*";
        ToolRunner.Result result = ToolRunner.Run("bench", "--quick", "--rounds", "1", "--filter", Cells, "--dir", dir.Path, "--out", dir.Path);
        Assert.True(result.ExitCode == 0, result.Error + result.Out);

        using JsonDocument json = JsonDocument.Parse(File.ReadAllText(dir.File("bench-report.json")));
        Assert.Empty(json.RootElement.GetProperty("rows").EnumerateArray());
        JsonElement dispatch = json.RootElement.GetProperty("dispatch");
        Assert.True(dispatch.GetProperty("spinIterationsPerMicrosecond").GetDouble() > 0);
        JsonElement[] cells = [.. dispatch.GetProperty("cells").EnumerateArray()];
        Assert.Equal(
            ["Dispatch/pagecache/qd8/spin0us/allcores", "Dispatch/pagecache/qd8/spin0us/1core", "Dispatch/pagecache/qd8/spin20us/allcores", "Dispatch/pagecache/qd8/spin20us/1core"],
            cells.Select(c => c.GetProperty("name").GetString()));
        bool fio = Spindle.Tool.Bench.FioRunner.Locate() is not null;
        foreach (JsonElement cell in cells)
        {
            string name = cell.GetProperty("name").GetString()!;
            Assert.True(cell.GetProperty("skipped").ValueKind == JsonValueKind.Null, $"{name}: {cell.GetProperty("skipped")}");
            // The one-core cell ran in a process that saw one CPU.
            Assert.Equal(name.EndsWith("1core", StringComparison.Ordinal) ? 1 : Environment.ProcessorCount, cell.GetProperty("processors").GetInt32());
            Assert.Equal(["System.IO", "Spindle Auto"], cell.GetProperty("results").EnumerateObject().Select(r => r.Name));
            foreach (JsonProperty contender in cell.GetProperty("results").EnumerateObject())
            {
                foreach (string figure in new[] { "operationsPerSecond", "cpuNsPerOperation", "p50Ns", "p99Ns", "worstWaitNs" })
                {
                    Assert.True(contender.Value.GetProperty(figure).GetDouble() > 0, $"{name}: {contender.Name} has no {figure}");
                }
            }
            Assert.True(cell.GetProperty("autoRatio").GetDouble() > 0);
            // A cell whose first measurement read below 0.97× System.IO was measured again with three times the rounds,
            // and that measurement stands; any other kept its one round.
            JsonElement firstPass = cell.GetProperty("firstPassAutoRatio");
            int rounds = firstPass.ValueKind == JsonValueKind.Number ? 3 : 1;
            if (firstPass.ValueKind == JsonValueKind.Number)
            {
                Assert.True(firstPass.GetDouble() < 0.97, $"{name}: measured again after {firstPass.GetDouble()}");
            }
            Assert.All(cell.GetProperty("results").EnumerateObject(), c => Assert.Equal(rounds, c.Value.GetProperty("rounds").GetInt32()));
            // Both contenders warmed up until they ran tier-1 code: at least 32 passes, at most 64.
            Assert.InRange(cell.GetProperty("warmupPasses").GetInt32(), 32, 64);
            Assert.True(cell.GetProperty("methodsCompiledInRounds").GetInt64() >= 0, name);
            string[] targets = [.. cell.GetProperty("targets").EnumerateArray().Select(t => t.GetProperty("target").GetString()!)];
            Assert.Contains(targets, t => t.StartsWith("Auto ops/s ≥", StringComparison.Ordinal) && t.EndsWith("× System.IO's", StringComparison.Ordinal));
            Assert.Contains("Auto worst wait ≤ System.IO's", targets);
            if (name.Contains("/spin0us/", StringComparison.Ordinal))
            {
                Assert.Contains("Auto ops/s ≥ 95 % of the limit", targets);
                Assert.Contains("Auto CPU/op ≤ 1.5× the limit's", targets);
                // fio's io_uring engine runs only where the kernel allows io_uring (kernel.io_uring_disabled).
                if (fio && SpindleRandomAccess.IsIoUringAvailable)
                {
                    Assert.True(cell.GetProperty("fioIoUring").GetProperty("iops").GetDouble() > 0, name);
                    Assert.Contains("--numjobs=8", cell.GetProperty("fioPsync").GetProperty("command").GetString());
                    Assert.True(cell.GetProperty("autoShareOfLimit").GetDouble() > 0);
                    Assert.Contains(cell.GetProperty("limitEngine").GetString(), new[] { "io_uring", "psync" });
                }
            }
            else
            {
                Assert.Equal(JsonValueKind.Null, cell.GetProperty("fioIoUring").ValueKind);
                Assert.Contains("Auto p50 ≤ 1.25× System.IO's", targets);
                // Scaling is checked on the all-cores cell against its one-core partner.
                Assert.Equal(!name.EndsWith("1core", StringComparison.Ordinal), targets.Contains("Auto scaling 1 core → all ≥ 0.95 × System.IO's"));
            }
        }
        Assert.Contains("Dispatch targets not met:", result.Out);
        string markdown = File.ReadAllText(dir.File("bench-report.md"));
        Assert.Contains("## Dispatch matrix", markdown);
        Assert.Contains("### Dispatch targets (Spindle Auto)", markdown);
        Assert.Contains("Warm-up passes / methods compiled in rounds", markdown);
        foreach (JsonElement cell in cells)
        {
            Assert.Contains($"| {cell.GetProperty("name").GetString()} |", markdown);
        }
        // The benchmark file is gone; only the reports stay.
        Assert.Equal(["bench-report.json", "bench-report.md", "bench-report.svg"], Directory.GetFiles(dir.Path).Select(Path.GetFileName).Order());
    }

    [Fact]
    public void A_zram_device_set_up_for_the_matrix_is_reset_and_removed_afterwards()
    {
        if (Skip(out string reason))
        {
            output.WriteLine("SKIPPED: " + reason);
            return;
        }
        string[] before = ZramDevices();
        string path;
        using (ZramDevice device = ZramDevice.Create(64L << 20, 8L << 20))
        {
            path = device.SysPath;
            Assert.Equal((64L << 20).ToString(CultureInfo.InvariantCulture), File.ReadAllText(Path.Combine(path, "disksize")).Trim());
            Assert.DoesNotContain(Path.GetFileName(path), before);
        }
        Assert.True(IsReleased(path), $"{path} is still set up");

        // Through the command: a zram cell runs and leaves the devices as they were.
        JsonElement cell = RunOneMeasuredCell("Dispatch/zram-direct/qd1/spin20us/allcores");
        string node = cell.GetProperty("storageDetail").GetString()!.Split(',')[0];
        Assert.StartsWith("/dev/zram", node, StringComparison.Ordinal);
        Assert.True(IsReleased("/sys/block/" + Path.GetFileName(node)), $"{node} is still set up");
    }

    [Fact]
    public void A_FUSE_cell_reads_through_a_bindfs_mount_of_the_run_and_unmounts_it_afterwards()
    {
        if (!File.Exists("/dev/fuse") || !IsOnPath("bindfs"))
        {
            output.WriteLine("SKIPPED: no /dev/fuse or no bindfs (a Debian package; .ci/run installs it)");
            return;
        }
        JsonElement cell = RunOneMeasuredCell("Dispatch/fuse-direct/qd8/spin0us/allcores");
        Assert.Contains("FUSE", cell.GetProperty("storageDetail").GetString()!, StringComparison.Ordinal);
        Assert.DoesNotContain("spindle-dispatch-fuse-", File.ReadAllText("/proc/self/mounts"), StringComparison.Ordinal);
    }

    // Runs one dispatch cell through the command (one short round, no fio) and returns its report entry, which it
    // checks was measured, not skipped.
    private static JsonElement RunOneMeasuredCell(string name)
    {
        using var dir = new TempDirectory();
        ToolRunner.Result result = ToolRunner.Run("bench", "--quick", "--rounds", "1", "--no-fio", "--filter", name, "--dir", dir.Path, "--out", dir.Path);
        Assert.True(result.ExitCode == 0, result.Error + result.Out);
        using JsonDocument json = JsonDocument.Parse(File.ReadAllText(dir.File("bench-report.json")));
        JsonElement cell = json.RootElement.GetProperty("dispatch").GetProperty("cells")[0].Clone();
        Assert.True(cell.GetProperty("skipped").ValueKind == JsonValueKind.Null, cell.GetProperty("skipped").ToString());
        return cell;
    }

    private static bool IsOnPath(string program)
        => (Environment.GetEnvironmentVariable("PATH") ?? "").Split(':').Any(d => File.Exists(Path.Combine(d, program)));

    [Fact]
    public void A_run_stopped_by_SIGTERM_resets_the_zram_device_it_set_up()
    {
        if (Skip(out string reason))
        {
            output.WriteLine("SKIPPED: " + reason);
            return;
        }
        string[] before = ZramDevices();
        using var dir = new TempDirectory();
        using var tool = ToolProcess.Start("bench", "--no-fio", "--rounds", "50", "--filter", "Dispatch/zram-direct/qd8/spin100us/allcores", "--dir", dir.Path, "--out", dir.Path);
        // Stopped once the device is set up (a new zramN with a disk size), in the middle of its rounds.
        string[] added = [];
        Assert.True(tool.WaitUntil(() => (added = [.. ZramDevices().Except(before).Where(d => !IsReleased("/sys/block/" + d))]).Length > 0), tool.Error);
        tool.Signal(15);
        (int exitCode, _, string error) = tool.WaitForExit();
        Assert.True(exitCode == 143, error);
        Assert.All(added, d => Assert.True(IsReleased("/sys/block/" + d), $"{d} is still set up"));
    }

    private static bool Skip(out string reason)
    {
        reason = Environment.UserName != "root" ? "zram needs root"
            : !Directory.Exists("/sys/class/zram-control") ? "no /sys/class/zram-control (zram not built in or loaded)"
            : "";
        return reason.Length > 0;
    }

    private static string[] ZramDevices() =>
        [.. Directory.EnumerateDirectories("/sys/block", "zram*").Select(d => Path.GetFileName(d)!).Order()];

    // Removed (a device the run added), or reset to no disk size (one it found unused).
    private static bool IsReleased(string sysPath)
    {
        try
        {
            return File.ReadAllText(Path.Combine(sysPath, "disksize")).Trim() == "0";
        }
        catch (Exception e) when (e is FileNotFoundException or DirectoryNotFoundException)
        {
            return true;
        }
    }
}
