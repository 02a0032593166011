using System.Diagnostics;
using Spindle.Workloads;
using Spindle.Tool.Cli;
using Spindle.Tool.Reports;

namespace Spindle.Tool.Bench;

/// <summary><c>spindle bench</c>: the benchmark matrix, System.IO and Spindle side by side in one process.</summary>
public sealed class BenchCommand : ICommand
{
    /// <inheritdoc />
    public string Name => "bench";

    /// <inheritdoc />
    public string Summary => "run System.IO and Spindle side by side on the benchmark matrix";

    /// <inheritdoc />
    public string Help => """
        usage: spindle bench [--quick] [--filter PATTERN] [--dir PATH] [--out PATH] [--rounds N] [--no-fio] [--list]

        Measures System.IO and Spindle side by side on this machine, in one process, over the benchmark
        matrix: FileStream and RandomAccess reads, writes, seeks and copies as .NET's own benchmarks do
        them, 4 KiB random reads (page cache and O_DIRECT, 1 to 128 in flight), sequential 1 MiB
        O_DIRECT reads and writes, a 1 GiB file copy, and a queue-depth sweep of O_DIRECT random reads.
        Each contender warms up until its time settles and the JIT has compiled its optimised (tier-1)
        code, so both sides run steady-state code; then System.IO, every Spindle engine and fio run
        interleaved round by round, and rows whose verdict is still open get more rounds of System.IO
        and Auto (up to 45 with --quick, 61 otherwise). It starts with the verdict: how many rows Spindle
        Auto (the engine you get without configuring one) is faster, equal within noise or slower than
        System.IO, and the noise measured. The table gives each median time per operation with ± its
        spread, the ratio Auto / System.IO with its 95 % interval and verdict, allocated bytes, and fio's
        (or cp's) figure where a row has one; more tables give CPU time and p50/p99 latency beside fio's
        and the queue-depth sweep. Spindle's performance targets are checked in a section of their own.
        Writes bench-report.md, bench-report.json, bench-report.svg (the ratios) and bench-sweep.svg.

        The dispatch matrix (rows Dispatch/STORAGE/qdN/spinCus/CORES) measures where completions and their
        continuations run: 4 KiB random reads on disk-direct (O_DIRECT), pagecache (warm), tmpfs-direct and
        zram-direct (a RAM block device, as root), 1 to 128 callers each spending 0 to 500 µs of CPU after
        each read, on all cores and on one (a child process pinned to one CPU); then, with 0 and 100 µs,
        tmpfs-cached, fuse-direct and fuse-cached (the disk file through bindfs, when installed), where
        io_uring hands every request to its kernel workers. System.IO against Spindle Auto, fio's io_uring
        and psync engines as the limit, each cell's targets marked. --quick runs a small subset;
        --filter 'Dispatch*' the whole matrix, --filter 'Dispatch/tmpfs*' one storage.

          --quick           shrink the large files and plan for 2 minutes (a full run plans for 10); a busy
                            machine stretches both: a quick run took 8 1/2 minutes on 2 cores at load 40-50
          --filter PATTERN  only rows whose name contains PATTERN, or matches it as a glob (* and ?);
                            several patterns separated by |, e.g. 'RandomRead4K*|Sequential*' or 'Sweep*'
          --dir PATH        where the benchmark files go (default: the current directory); O_DIRECT
                            rows are skipped on file systems without direct I/O
          --out PATH        where the reports go (default: the current directory)
          --rounds N        measured rounds per contender before the stability stage (default 21, --quick 15)
          --no-fio          do not run fio even when it is installed
          --list            print the rows that would run and stop
          --clients         instead: FASTER, ZoneTree, LiteDB and Garnet on Spindle vs their Linux defaults (source tree only;
                            --filter garnet for the Garnet rows, which need redis-tools)

        Ctrl-C or SIGTERM stops the run and removes its files (exit code 130 or 143).
        """;

    private static readonly string[] Valued = ["--filter", "--dir", "--out", "--rounds"];
    private static readonly string[] Switches = ["--quick", "--no-fio", "--list"];

    /// <inheritdoc />
    public int Run(IReadOnlyList<string> args, ToolConsole console)
    {
        if (args.Contains("--clients")) return ClientsBenchForwarder.Run(args, console); // FASTER, ZoneTree, LiteDB: see that file
        if (args.Contains(DispatchChild.Flag)) return DispatchChild.Run(console);          // a one-core dispatch cell: see that file
        Arguments line = Arguments.Parse(args, Valued, Switches);
        if (line.Help)
        {
            console.Out.WriteLine(Help);
            return 0;
        }
        if (line.Positional.Count > 0)
        {
            throw new UsageException($"unexpected argument: {line.Positional[0]}");
        }
        bool quick = line.Has("--quick");
        HarnessSettings settings = quick ? HarnessSettings.Quick : HarnessSettings.Full;
        int rounds = line.Int("--rounds", settings.Rounds);
        settings = settings with { Rounds = rounds, MaxRounds = Math.Max(settings.MaxRounds, rounds) };
        if (line.Value("--filter") is { } pattern && pattern.Split('|').All(string.IsNullOrWhiteSpace))
        {
            throw new UsageException("--filter needs a pattern (leave --filter out to run every row; spindle bench --list shows them)");
        }
        var filter = new RowFilter(line.Value("--filter"));
        List<Workload> rows = Matrix.Build(quick ? MatrixScale.Quick : MatrixScale.Full).Where(r => filter.Matches(r.Name)).ToList();
        IReadOnlyList<DispatchCell> cells = DispatchSection.Select(quick, line.Value("--filter"));
        if (rows.Count == 0 && cells.Count == 0)
        {
            throw new UsageException($"no row matches --filter {line.Value("--filter")} (spindle bench --list shows the rows)");
        }
        if (line.Has("--list"))
        {
            rows.ForEach(r => console.Out.WriteLine(r.Name));
            cells.ToList().ForEach(c => console.Out.WriteLine(c.Name));
            return 0;
        }
        string directory = Directories.Writable(line.Value("--dir", "."), "--dir");
        string output = Directories.Writable(line.Value("--out", "."), "--out");
        string? fio = line.Has("--no-fio") ? null : FioRunner.Locate();
        string noFio = line.Has("--no-fio") ? "n/a (--no-fio)" : FioRunner.NotInstalled;

        BenchReport report = RunAsync(rows, settings, directory, fio, noFio, quick, console).GetAwaiter().GetResult();
        if (cells.Count > 0)
        {
            DispatchSettings dispatch = quick ? DispatchSettings.Quick : DispatchSettings.Full;
            dispatch = dispatch with { Rounds = line.Int("--rounds", dispatch.Rounds) };
            var clock = Stopwatch.StartNew();
            using var files = new BenchFiles(directory);
            report.Dispatch = DispatchSection.RunAsync(cells, dispatch, files, fio, noFio, console).GetAwaiter().GetResult();
            report.Elapsed += clock.Elapsed;
        }

        BenchOutput.WriteTables(report, console.Out);
        IReadOnlyList<string> written = BenchOutput.WriteFiles(report, output);
        var summary = new BenchSummary(report.Rows);
        console.Out.WriteLine();
        console.Out.WriteLine($"{report.Rows.Count} rows in {report.Elapsed.TotalSeconds:0} s{(quick ? " (--quick)" : "")}. {summary.Headline()}");
        console.Out.WriteLine(summary.TargetsLine());
        if (cells.Count > 0)
        {
            console.Out.WriteLine($"dispatch matrix: {cells.Count} cells, {DispatchReport.Missed(report.Dispatch)} target checks not met (see the report)");
        }
        console.Out.WriteLine($"engines: {report.Engines}");
        console.Out.WriteLine($"wrote {string.Join(", ", written)}");
        return 0;
    }

    private static async Task<BenchReport> RunAsync(List<Workload> rows, HarnessSettings settings, string directory, string? fio, string noFio, bool quick, ToolConsole console)
    {
        var started = DateTimeOffset.UtcNow;
        MachineInfo machine = MachineInfo.Read(directory);   // before the run, so the load average is other work's
        var clock = Stopwatch.StartNew();
        var progress = console.Progress();
        var results = new List<RowResult>();
        using var files = new BenchFiles(directory);
        try
        {
            for (int i = 0; i < rows.Count; i++)
            {
                progress.Report(i, rows.Count, $"row {i + 1} of {rows.Count}: {rows[i].Name}");
                TimeSpan stability = StabilityAllowance(settings, clock.Elapsed, i, rows.Count - i);
                // The rounds of each row share what is left of the budget (a few rows with long calls get fewer rounds).
                TimeSpan roundsTime = TimeSpan.FromTicks(Math.Max(settings.Budget.Ticks - clock.Elapsed.Ticks, settings.Budget.Ticks / 4) / (rows.Count - i) / 2);
                results.Add(await RunRowAsync(rows[i], files, settings, stability, roundsTime, fio, noFio, console.Cancellation).ConfigureAwait(false));
            }
        }
        finally
        {
            progress.Clear();
            foreach (Workload row in rows)
            {
                row.Dispose();
            }
        }
        return new BenchReport
        {
            Date = started,
            Machine = machine,
            Quick = quick,
            Settings = settings,
            Directory = directory,
            FioVersion = fio is null ? null : FioVersion(fio),
            Rows = results,
            Elapsed = clock.Elapsed,
        };
    }

    // The stability stage's time for the next row: at most the per-row allowance, and no more than the budget
    // leaves once the remaining rows have had the time the rows so far took on average.
    private static TimeSpan StabilityAllowance(HarnessSettings settings, TimeSpan elapsed, int done, int left)
    {
        if (done == 0)
        {
            return settings.StabilityTime;
        }
        TimeSpan slack = settings.Budget - elapsed - elapsed / done * left;
        return slack <= TimeSpan.Zero ? TimeSpan.Zero : TimeSpan.FromTicks(Math.Min(settings.StabilityTime.Ticks, slack.Ticks / left));
    }

    private static async Task<RowResult> RunRowAsync(Workload row, BenchFiles files, HarnessSettings settings, TimeSpan stability, TimeSpan roundsTime,
        string? fio, string noFio, CancellationToken cancellation)
    {
        try
        {
            row.Setup(files);
        }
        catch (NotSupportedException e)
        {
            return new RowResult { Name = row.Name, Group = row.Group, IsAsync = row.IsAsync, OperationsPerInvocation = row.OperationsPerInvocation, Results = [], Skipped = e.Message };
        }
        FioRounds? fioRounds = row.Fio is { } job && fio is not null ? new FioRounds(fio, job, settings.FioTime) : null;
        IReadOnlyList<ContenderResult> measured = await Harness.MeasureAsync(row, settings, cancellation, fioRounds is null ? null : fioRounds.RunAsync, stability, roundsTime)
            .ConfigureAwait(false);
        FioResult? fioResult = fioRounds?.Median;
        string fioNote = row.Fio is null ? "—" : fioRounds is null ? noFio : fioRounds.Failure ?? "—";
        if (row.Reference is { } reference)
        {
            try
            {
                fioResult = await ReferenceRunner.RunAsync(reference, cancellation).ConfigureAwait(false);
                fioNote = fioResult is null ? $"n/a ({reference.Program} not installed)" : fioNote;
            }
            catch (Exception e) when (e is InvalidOperationException or System.ComponentModel.Win32Exception)
            {
                fioNote = e.Message;
            }
        }
        row.Dispose();
        return new RowResult
        {
            Name = row.Name,
            Group = row.Group,
            IsAsync = row.IsAsync,
            OperationsPerInvocation = row.OperationsPerInvocation,
            CallsPerInvocation = row.CallsPerInvocation,
            InFlight = row is Workloads.Beyond.RandomReads reads ? reads.InFlight : 0,
            RecordsLatency = row.RecordsLatency,
            Results = measured,
            Fio = fioResult,
            FioNote = fioNote,
        };
    }

    private static string? FioVersion(string fio)
    {
        try
        {
            using Process process = Process.Start(new ProcessStartInfo(fio, "--version") { RedirectStandardOutput = true, UseShellExecute = false })!;
            string version = process.StandardOutput.ReadToEnd().Trim();
            process.WaitForExit();
            return version;
        }
        catch (System.ComponentModel.Win32Exception)
        {
            return null;
        }
    }
}
