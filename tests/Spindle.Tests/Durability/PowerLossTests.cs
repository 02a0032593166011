using System.Buffers.Binary;
using System.Collections.Concurrent;
using System.Diagnostics;
using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Durability;

/// <summary>
/// Power loss and kill -9 on a real file system (ext4, xfs) in an image file attached to a loop device with direct I/O.
/// A child writes numbered records with one durable call each and prints each number once the call returned. After
/// <see cref="AcksBeforeSnapshot"/> acknowledgements the test stops the child and copies the image file: the copy holds
/// exactly what the loop device was sent, without the mounted file system's page cache, which is what a power loss
/// leaves. The copy is mounted normally (its journal or log replayed, as after a crash) and every record acknowledged
/// before the copy must be in it, intact. Then the child runs on, is killed with SIGKILL, and every record it
/// acknowledged must be in the live file. Target: 0 acknowledged records lost in either case.
/// </summary>
public sealed class PowerLossTests
{
    private const int RecordSize = 128;
    private const int AcksBeforeSnapshot = 200;
    private const int AcksAfterSnapshot = 100;
    private const int AppendWriters = 4;
    private const int SIGCONT = 18;
    private const int SIGSTOP = 19;

    /// <summary>The child: writes records until killed, printing "ACK n" after the call that made record n durable returned.</summary>
    public static int WriteUntilKilled(string[] args)
    {
        string path = args[0];
        string mode = args[1];
        bool append = mode == "append";
        using SafeFileHandle handle = SpindleFile.OpenHandle(path, new SpindleFileOptions
        {
            Mode = FileMode.Open, Access = FileAccess.Write, Share = FileShare.ReadWrite, AtomicAppend = append,
        });
        var gate = new object();
        void Acknowledge(long id)
        {
            lock (gate)
            {
                Console.Out.WriteLine("ACK " + id);
                Console.Out.Flush();
            }
        }

        if (append)
        {
            // Several writers, so that records are committed in groups as well as alone.
            var writer = new AppendLogWriter(handle);
            Task[] tasks = Enumerable.Range(0, AppendWriters).Select(w => Task.Run(async () =>
            {
                for (long id = w; ; id += AppendWriters)
                {
                    await writer.AppendDurableAsync(Record(id));
                    Acknowledge(id);
                }
            })).ToArray();
            Task.WaitAll(tasks);
            return 0;
        }

        for (long id = 0; ; id++)
        {
            byte[] record = Record(id);
            long offset = id * RecordSize;
            switch (mode)
            {
                case "write-durable":
                    SpindleRandomAccess.WriteDurable(handle, record, offset);
                    break;
                case "write-durable-async":
                    SpindleRandomAccess.WriteDurableAsync(handle, record, offset).AsTask().GetAwaiter().GetResult();
                    break;
                case "write-fdatasync":
                    SpindleRandomAccess.Write(handle, record, offset);
                    SpindleRandomAccess.FlushDataToDisk(handle);
                    break;
                default:
                    throw new ArgumentException("unknown mode " + mode);
            }
            Acknowledge(id);
        }
    }

    [Theory]
    [InlineData("ext4", "append")]
    [InlineData("ext4", "write-durable")]
    [InlineData("ext4", "write-durable-async")]
    [InlineData("ext4", "write-fdatasync")]
    [InlineData("xfs", "append")]
    [InlineData("xfs", "write-durable")]
    [InlineData("xfs", "write-durable-async")]
    [InlineData("xfs", "write-fdatasync")]
    public void Records_acknowledged_before_a_power_loss_snapshot_or_a_SIGKILL_are_all_there(string fileSystem, string mode)
    {
        if (!Environment.IsPrivilegedProcess)
        {
            Console.WriteLine($"SKIPPED: power-loss test ({fileSystem}) needs root to attach loop devices and mount");
            return;
        }
        if (!File.Exists("/dev/loop-control") || FindTool("losetup") is null)
        {
            Console.WriteLine($"SKIPPED: power-loss test ({fileSystem}): no loop devices (/dev/loop-control or losetup missing)");
            return;
        }
        string? mkfs = FindTool("mkfs." + fileSystem);
        if (mkfs is null)
        {
            Console.WriteLine($"SKIPPED: power-loss test ({fileSystem}): mkfs.{fileSystem} is not installed");
            return;
        }

        using var dir = new TempDirectory(AppContext.BaseDirectory);
        // xfs refuses file systems under 300 MiB; the images are sparse, so only what the file system writes takes space.
        long imageSize = fileSystem == "xfs" ? 320L << 20 : 64L << 20;
        string image = dir.File("image");
        string snapshot = dir.File("snapshot");
        string liveMount = dir.File("live");
        string snapshotMount = dir.File("after-power-loss");
        Directory.CreateDirectory(liveMount);
        Directory.CreateDirectory(snapshotMount);
        using (var stream = new FileStream(image, FileMode.CreateNew))
        {
            stream.SetLength(imageSize);
        }
        // Two copies of one xfs must not be mounted at once without nouuid; the live one is unmounted first anyway.
        string mountOptions = fileSystem == "xfs" ? "-o nouuid" : "";

        string? device = null;
        string? mountedAt = null;
        Process? child = null;
        var acknowledged = new List<long>();
        List<long> beforeSnapshot;
        try
        {
            (int code, string output) = Run("losetup", $"--find --show --direct-io=on {image}");
            if (code != 0)
            {
                Console.WriteLine($"SKIPPED: power-loss test ({fileSystem}): losetup failed (exit {code}): {output}");
                return;
            }
            device = output.Trim();
            Check(mkfs, $"-q {device}");
            Check("mount", $"{device} {liveMount}");
            mountedAt = liveMount;

            // The file and its directory entry are made durable at setup, as docs/durability.md tells users to:
            // none of the calls under test covers a new file's name.
            string path = Path.Combine(liveMount, "records");
            File.Create(path).Dispose();
            Check("sync", $"-f {path}");

            child = DurableChild.Start(typeof(PowerLossTests), nameof(WriteUntilKilled), null, path, mode);
            Task<string> error = child.StandardError.ReadToEndAsync();
            var lines = new BlockingCollection<string>();
            Process reading = child;
            var reader = new Thread(() =>
            {
                string? line;
                while ((line = reading.StandardOutput.ReadLine()) is not null)
                {
                    lines.Add(line);
                }
                lines.CompleteAdding();
            }) { IsBackground = true };
            reader.Start();

            void ReadAcks(int count)
            {
                int target = acknowledged.Count + count;
                while (acknowledged.Count < target)
                {
                    if (!lines.TryTake(out string? line, TimeSpan.FromSeconds(60)))
                    {
                        throw new InvalidOperationException(lines.IsCompleted
                            ? $"the child ended after {acknowledged.Count} records: {error.Result}"
                            : $"no acknowledgement in 60 s after {acknowledged.Count} records");
                    }
                    if (line.StartsWith("ACK ", StringComparison.Ordinal))
                    {
                        acknowledged.Add(long.Parse(line.AsSpan(4)));
                    }
                }
            }

            ReadAcks(AcksBeforeSnapshot);
            // Stopped, the child sends nothing to the device while the image is copied, so the copy is one moment's
            // state, not a mix of blocks read before and after later commits (which no crash could produce).
            Assert.Equal(0, kill(child.Id, SIGSTOP));
            WaitUntilStopped(child.Id);
            beforeSnapshot = [.. acknowledged];
            Check("cp", $"--sparse=always {image} {snapshot}");
            Assert.Equal(0, kill(child.Id, SIGCONT));

            ReadAcks(AcksAfterSnapshot);
            child.Kill(); // SIGKILL
            child.WaitForExit(30_000);
            reader.Join(30_000);
            // Every acknowledgement the child printed before it died counts.
            while (lines.TryTake(out string? line))
            {
                if (line.StartsWith("ACK ", StringComparison.Ordinal))
                {
                    acknowledged.Add(long.Parse(line.AsSpan(4)));
                }
            }

            (int lostToKill, int foundLive) = CountLost(path, mode, acknowledged);
            Console.WriteLine($"kill -9 ({fileSystem}, {mode}): {acknowledged.Count} records acknowledged, {lostToKill} lost ({foundLive} intact in the file)");
            Assert.Equal(0, lostToKill);

            Check("umount", liveMount);
            mountedAt = null;
            Check("losetup", $"-d {device}");
            device = null;

            // After the power loss: the copy mounted read-write so that the journal (ext4) or log (xfs) is replayed.
            (code, output) = Run("losetup", $"--find --show {snapshot}");
            Assert.True(code == 0, $"losetup of the snapshot failed: {output}");
            device = output.Trim();
            Check("mount", $"{mountOptions} {device} {snapshotMount}".Trim());
            mountedAt = snapshotMount;
            (int lost, int found) = CountLost(Path.Combine(snapshotMount, "records"), mode, beforeSnapshot);
            Console.WriteLine($"power loss ({fileSystem}, {mode}): {beforeSnapshot.Count} records acknowledged before the snapshot, {lost} lost ({found} intact in the file)");
            Assert.Equal(0, lost);
        }
        finally
        {
            if (child is not null)
            {
                if (!child.HasExited)
                {
                    child.Kill();
                    child.WaitForExit(30_000);
                }
                child.Dispose();
            }
            if (mountedAt is not null)
            {
                Run("umount", mountedAt);
            }
            if (device is not null)
            {
                Run("losetup", $"-d {device}");
            }
        }
    }

    /// <summary>How many of <paramref name="acknowledged"/> are missing or damaged in the file, and how many records it holds intact.</summary>
    private static (int Lost, int Found) CountLost(string path, string mode, IReadOnlyList<long> acknowledged)
    {
        var intact = new HashSet<long>();
        if (File.Exists(path))
        {
            if (mode == "append")
            {
                using var reader = new AppendLogReader(path);
                while (reader.Read())
                {
                    ReadOnlySpan<byte> payload = reader.Record.Span;
                    if (payload.Length == RecordSize)
                    {
                        long id = BinaryPrimitives.ReadInt64LittleEndian(payload);
                        if (payload.SequenceEqual(Record(id)))
                        {
                            intact.Add(id);
                        }
                    }
                }
            }
            else
            {
                byte[] bytes = File.ReadAllBytes(path);
                for (int offset = 0; offset + RecordSize <= bytes.Length; offset += RecordSize)
                {
                    long id = offset / RecordSize;
                    if (bytes.AsSpan(offset, RecordSize).SequenceEqual(Record(id)))
                    {
                        intact.Add(id);
                    }
                }
            }
        }
        return (acknowledged.Count(id => !intact.Contains(id)), intact.Count);
    }

    /// <summary>Record <paramref name="id"/>: its number, then bytes that depend on it, so that a torn or stale record shows.</summary>
    private static byte[] Record(long id)
    {
        byte[] record = new byte[RecordSize];
        BinaryPrimitives.WriteInt64LittleEndian(record, id);
        for (int i = sizeof(long); i < record.Length; i++)
        {
            record[i] = (byte)(id * 31 + i);
        }
        return record;
    }

    private static void WaitUntilStopped(int pid)
    {
        var clock = Stopwatch.StartNew();
        while (clock.Elapsed < TimeSpan.FromSeconds(30))
        {
            // /proc/<pid>/stat: "pid (comm) state ..."; 'T' is stopped by a signal.
            string stat = File.ReadAllText($"/proc/{pid}/stat");
            if (stat[stat.LastIndexOf(')') + 2] == 'T')
            {
                return;
            }
            Thread.Sleep(1);
        }
        throw new TimeoutException("the child did not stop on SIGSTOP");
    }

    private static string? FindTool(string name) =>
        new[] { "/usr/sbin", "/sbin", "/usr/bin", "/bin" }.Select(d => Path.Combine(d, name)).FirstOrDefault(File.Exists);

    private static void Check(string program, string arguments)
    {
        (int code, string output) = Run(program, arguments);
        Assert.True(code == 0, $"{program} {arguments} failed (exit {code}): {output}");
    }

    private static (int Code, string Output) Run(string program, string arguments)
    {
        using var process = Process.Start(new ProcessStartInfo(program, arguments) { RedirectStandardError = true, RedirectStandardOutput = true })!;
        Task<string> error = process.StandardError.ReadToEndAsync();
        string output = process.StandardOutput.ReadToEnd();
        process.WaitForExit();
        return (process.ExitCode, output + error.Result);
    }

    [DllImport("libc", SetLastError = true)]
    private static extern int kill(int pid, int signal);
}
