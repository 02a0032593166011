namespace Spindle.Clients.Probe;

/// <summary>The probe's workloads: write, make durable, say so, and go on writing until killed.</summary>
public static class CrashWriters
{
    /// <summary>Enqueues <see cref="LogEntries"/> forever, committing every <paramref name="batch"/> entries (<paramref name="directIO"/>: segment files with O_DIRECT).</summary>
    public static void FasterLog(string directory, IoEngine engine, int batch, bool directIO)
    {
        var (log, _) = FasterLogs.Open(directory, engine, directIO: directIO);
        long next = 0;
        while (true)
        {
            for (int i = 0; i < batch; i++)
            {
                log.Enqueue(LogEntries.Create(next++));
            }
            log.Commit(spinWait: true);
            Console.Out.WriteLine($"committed {next}");
            Console.Out.Flush();
        }
    }

    /// <summary>Upserts <see cref="ZoneTreeKeys"/> forever, flushing the write-ahead log every <paramref name="batch"/> keys.</summary>
    public static void ZoneTree(string directory, IoEngine engine, int batch)
    {
        using var tree = ZoneTrees.Open(directory, engine, global::ZoneTree.Options.WriteAheadLogMode.Sync);
        int next = 0;
        while (true)
        {
            for (int i = 0; i < batch; i++, next++)
            {
                tree.Upsert(next, ZoneTreeKeys.ValueOf(next));
            }
            Console.Out.WriteLine($"committed {next}");
            Console.Out.Flush();
        }
    }
}
