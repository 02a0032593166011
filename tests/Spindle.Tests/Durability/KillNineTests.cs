using System.Diagnostics;
using System.Text;
using Microsoft.Win32.SafeHandles;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Durability;

/// <summary>
/// A child process appends records and prints each one once it is acknowledged; the test kills it with SIGKILL
/// mid-stream and counts acknowledged records missing from the file (target 0). This shows that an acknowledged
/// record was written whole before the acknowledgement; it does not cut the power, so it says nothing of the
/// device's cache (that is what the data sync is for).
/// </summary>
public class KillNineTests
{
    public static int AppendUntilKilled(string[] args)
    {
        string path = args[0];
        bool durableWrites = args[1] == "write";
        using SafeFileHandle handle = SpindleFile.OpenHandle(path, new SpindleFileOptions
        {
            Mode = FileMode.OpenOrCreate, Access = FileAccess.Write, Share = FileShare.ReadWrite, AtomicAppend = !durableWrites,
        });
        var writer = durableWrites ? null : new AppendLogWriter(handle);
        var gate = new object();
        Console.Out.Flush();
        Task[] tasks = Enumerable.Range(0, 8).Select(w => Task.Run(async () =>
        {
            for (int n = 0; ; n++)
            {
                string record = $"w{w}-r{n}";
                if (writer is not null)
                {
                    await writer.AppendDurableAsync(Encoding.ASCII.GetBytes(record));
                }
                else
                {
                    // Fixed 64-byte slots: slot (w, n) at its own offset.
                    byte[] slot = new byte[64];
                    Encoding.ASCII.GetBytes(record).CopyTo(slot, 0);
                    await SpindleRandomAccess.WriteDurableAsync(handle, slot, ((long)n * 8 + w) * 64);
                }
                lock (gate)
                {
                    Console.Out.WriteLine("ACK " + record);
                    Console.Out.Flush();
                }
            }
        })).ToArray();
        Task.WaitAll(tasks);
        return 0;
    }

    [Theory]
    [InlineData("group")]
    [InlineData("write")]
    public void Records_acknowledged_before_a_SIGKILL_are_all_in_the_file(string mode)
    {
        using var dir = new TempDirectory(AppContext.BaseDirectory);
        string path = dir.File("log");
        var acknowledged = new List<string>();
        using (Process child = DurableChild.Start(typeof(KillNineTests), nameof(AppendUntilKilled), null, path, mode))
        {
            _ = child.StandardError.ReadToEndAsync();
            while (acknowledged.Count < 3000)
            {
                string? line = child.StandardOutput.ReadLine();
                if (line is null)
                {
                    break;
                }
                if (line.StartsWith("ACK ", StringComparison.Ordinal))
                {
                    acknowledged.Add(line[4..]);
                }
            }
            child.Kill(); // SIGKILL on Linux
            child.WaitForExit(30_000);
        }
        Assert.True(acknowledged.Count >= 3000, $"the child acknowledged only {acknowledged.Count} records");

        HashSet<string> inFile;
        if (mode == "group")
        {
            inFile = AppendLog.ReadAll(path).Records.Select(r => Encoding.ASCII.GetString(r.Span)).ToHashSet();
        }
        else
        {
            byte[] bytes = File.ReadAllBytes(path);
            inFile = Enumerable.Range(0, bytes.Length / 64).Select(i => Encoding.ASCII.GetString(bytes, i * 64, 64).TrimEnd('\0')).ToHashSet();
        }
        int lost = acknowledged.Count(r => !inFile.Contains(r));
        Console.WriteLine($"kill -9 ({mode}): {acknowledged.Count} records acknowledged, {lost} lost");
        Assert.Equal(0, lost);
    }
}
