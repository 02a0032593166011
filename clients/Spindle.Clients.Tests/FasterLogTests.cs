using System.Diagnostics;
using FASTER.core;
using Spindle.Clients.Probe;

namespace Spindle.Clients.Tests;

/// <summary>FasterLog on SpindleDevice: what is committed comes back, in order, after a restart or a crash.</summary>
public sealed class FasterLogTests
{
    private const int EntryCount = 100_000;

    [Theory]
    [MemberData(nameof(Engines.AllAndAutoDirect), MemberType = typeof(Engines))]
    public void EnqueuedEntriesCommittedAndReopenedScanBackInOrder(IoEngine engine, bool directIO)
    {
        using var directory = new TestDirectory();
        var (log, device) = FasterLogs.Open(directory.Path, engine, directIO: directIO);
        for (int i = 0; i < EntryCount; i++)
        {
            log.Enqueue(LogEntries.Create(i));
        }
        log.Commit(spinWait: true);
        log.Dispose();
        device.Dispose();

        var (reopened, reopenedDevice) = FasterLogs.Open(directory.Path, engine, directIO: directIO);
        try
        {
            Assert.Equal(EntryCount, ScanAndCheck(reopened));
        }
        finally
        {
            reopened.Dispose();
            reopenedDevice.Dispose();
        }
    }

    [Theory]
    [InlineData(IoEngine.Auto)]
    [InlineData(IoEngine.Sync)]
    [InlineData(IoEngine.ThreadPool)]
    public void With_DataSyncWrites_every_committed_entry_scans_back_after_a_reopen(IoEngine engine)
    {
        // Each page write durable on its own (RWF_DSYNC) instead of O_SYNC files: the log and its commit records.
        using var directory = new TestDirectory();
        var (log, device) = FasterLogs.Open(directory.Path, engine, dataSyncWrites: true);
        for (int i = 0; i < 5_000; i++)
        {
            log.Enqueue(LogEntries.Create(i));
            if (i % 500 == 499)
            {
                log.Commit(spinWait: true);
            }
        }
        log.Dispose();
        device.Dispose();

        var (reopened, reopenedDevice) = FasterLogs.Open(directory.Path, engine, dataSyncWrites: true);
        try
        {
            Assert.Equal(5_000, ScanAndCheck(reopened));
        }
        finally
        {
            reopened.Dispose();
            reopenedDevice.Dispose();
        }
    }

    [Theory]
    [MemberData(nameof(Engines.AllAndAutoDirect), MemberType = typeof(Engines))]
    public void ChildKilledRightAfterACommitLosesNoCommittedEntry(IoEngine engine, bool directIO)
    {
        using var directory = new TestDirectory();
        // The child commits every 2,000 entries and prints "committed N"; it is killed (SIGKILL) as
        // soon as a line says at least 10,000, while it goes on enqueuing and committing.
        long committed = ChildProcess.RunUntilCommitted(directIO ? "fasterlog-direct" : "fasterlog", directory.Path, engine, batch: 2_000, atLeast: 10_000);

        var (log, device) = FasterLogs.Open(directory.Path, engine, directIO: directIO);
        try
        {
            long recovered = ScanAndCheck(log);
            Assert.True(recovered >= committed, $"{recovered} entries recovered, {committed} were committed");
        }
        finally
        {
            log.Dispose();
            device.Dispose();
        }
    }

    /// <summary>Scans the committed log from its start; every entry must be the next one written.</summary>
    private static long ScanAndCheck(FasterLog log)
    {
        long count = 0;
        using FasterLogScanIterator iterator = log.Scan(log.BeginAddress, long.MaxValue);
        while (iterator.GetNext(out byte[] entry, out int length, out long address))
        {
            byte[] expected = LogEntries.Create(count);
            Assert.True(length == expected.Length && entry.AsSpan(0, length).SequenceEqual(expected), $"entry {count} at {address} differs");
            count++;
        }
        return count;
    }
}

/// <summary>Runs Spindle.Clients.Probe as a child process and kills it deterministically.</summary>
internal static class ChildProcess
{
    private static string ProbePath => Path.Combine(AppContext.BaseDirectory, "Spindle.Clients.Probe.dll");

    /// <summary>Runs the probe to its end and returns its output lines; throws if it fails.</summary>
    public static string[] RunToEnd(params string[] arguments)
    {
        var start = new ProcessStartInfo("dotnet") { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        start.ArgumentList.Add(ProbePath);
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }
        using var child = Process.Start(start)!;
        Task<string> errors = child.StandardError.ReadToEndAsync();
        var lines = new List<string>();
        while (child.StandardOutput.ReadLine() is string line)
        {
            lines.Add(line);
        }
        child.WaitForExit();
        if (child.ExitCode != 0)
        {
            throw new InvalidOperationException($"the probe failed ({child.ExitCode}): {errors.Result}");
        }
        return lines.ToArray();
    }

    /// <summary>
    /// Starts the probe's <paramref name="workload"/> and kills it with SIGKILL as soon as it prints
    /// "committed N" with N at least <paramref name="atLeast"/>; returns that N.
    /// </summary>
    public static long RunUntilCommitted(string workload, string directory, IoEngine engine, int batch, long atLeast)
    {
        var start = new ProcessStartInfo("dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        foreach (string argument in new[] { ProbePath, workload, directory, engine.ToString(), batch.ToString(System.Globalization.CultureInfo.InvariantCulture) })
        {
            start.ArgumentList.Add(argument);
        }
        using var child = Process.Start(start)!;
        var errors = new System.Text.StringBuilder();
        child.ErrorDataReceived += (_, e) => { lock (errors) { errors.AppendLine(e.Data); } };
        child.BeginErrorReadLine();
        try
        {
            while (child.StandardOutput.ReadLine() is string line)
            {
                if (line.StartsWith("committed ", StringComparison.Ordinal) && long.Parse(line.AsSpan(10), System.Globalization.CultureInfo.InvariantCulture) is long n && n >= atLeast)
                {
                    child.Kill(); // SIGKILL on Linux: no finalizers, no flush, no dispose
                    child.WaitForExit();
                    return n;
                }
            }
            child.WaitForExit();
            lock (errors)
            {
                throw new InvalidOperationException($"the probe exited ({child.ExitCode}) before committing {atLeast}: {errors}");
            }
        }
        finally
        {
            if (!child.HasExited)
            {
                child.Kill();
                child.WaitForExit();
            }
        }
    }
}
