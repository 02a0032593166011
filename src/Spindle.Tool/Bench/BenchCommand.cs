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
        usage: spindle bench [--quick] [--filter PATTERN] [--dir PATH] [--out PATH] [--rounds N] [--busy N] [--readme PATH] [--no-fio] [--list]

        Measures System.IO and Spindle side by side on this machine, in one process, over the benchmark
        matrix: FileStream and RandomAccess reads, writes, seeks and copies as .NET's own benchmarks do
        them, 4 KiB random reads (page cache and O_DIRECT, 1 to 128 in flight; 64 started at once; 64
        pool threads each waiting for its reads synchronously, beside fio's psync engine with a thread
        each), sequential 1 MiB O_DIRECT reads and writes, a 1 GiB file copy, and a queue-depth sweep of
        O_DIRECT random reads.
        Each contender warms up until its time settles and the JIT has compiled its optimised (tier-1)
        code, so both sides run steady-state code; then System.IO, every Spindle engine and fio run
        interleaved round by round, and rows whose verdict is still open get more rounds of System.IO
        and Auto (up to 45 with --quick, 61 otherwise). It starts with the verdict: how many rows Spindle
        Auto (the engine you get without configuring one) is faster, equal within noise or slower than
        System.IO, and the noise measured. The table gives each median time per operation with ± its
        spread, the ratio Auto / System.IO with its 95 % interval and verdict, allocated bytes, and fio's
        (or cp's) figure where a row has one; more tables give, per operation, CPU time, context switches
        (getrusage, every thread), io_uring_enter calls (Spindle's meter; fio's counted by perf when
        installed) and p50/p99/worst latency beside fio's, and the queue-depth sweep. Spindle's performance
        targets are checked in a section of their own. Without fio the report says how to install it.
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
          --busy N          measure each selected row a second time right after its quiet run, with N CPU-bound
                            processes (shell busy loops) beside it, stopped when the row ends; the targets
                            compare Auto / System.IO busy with quiet (e.g. --busy 2 --filter 'RandomRead4K.Direct*')
          --readme PATH     also write the headline rows (ops/s, CPU, context switches and io_uring_enter per
                            operation; System.IO, Auto, fio) between the lines <!-- bench:headline --> and
                            <!-- /bench:headline --> of PATH (the README), leaving the rest of the file as it is
          --no-fio          do not run fio even when it is installed
          --list            print the rows that would run and stop
          --clients         instead: FASTER, ZoneTree, LiteDB and Garnet on Spindle vs their Linux defaults (source tree only;
                            --filter garnet for the Garnet rows, which need redis-tools)

        Ctrl-C or SIGTERM stops the run and removes its files (exit code 130 or 143).
        """;

    private static readonly string[] Valued = ["--filter", "--dir", "--out", "--rounds", "--busy", "--readme"];
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
        PerfEnterCounter? perf = fio is null ? null : PerfEnterCounter.Locate();
        int busy = line.Int("--busy", 0);
        if (busy < 0)
        {
            throw new UsageException("--busy needs a number of processes, 0 or more");
        }
        string? readme = line.Value("--readme");
        if (readme is not null && !File.Exists(readme))
        {
            throw new UsageException($"--readme {readme}: no such file");
        }
        var plan = new RunPlan(rows, busy > 0 ? Matrix.Build(quick ? MatrixScale.Quick : MatrixScale.Full).Where(r => filter.Matches(r.Name)).ToList() : null, busy);
        List<string> notes = Notes(fio, line.Has("--no-fio"), perf, busy);

        BenchReport report = RunAsync(plan, settings, directory, fio, noFio, perf, quick, notes, console).GetAwaiter().GetResult();
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
        if (readme is not null)
        {
            ReadmeHeadline.WriteInto(readme, report, CommandLine(line));
            console.Out.WriteLine($"wrote the headline block of {readme}");
        }
        return 0;
    }

    // What a reader of the report must know about figures that are missing, and how the rows were loaded.
    private static List<string> Notes(string? fio, bool noFio, PerfEnterCounter? perf, int busy)
    {
        var notes = new List<string>();
        if (fio is null && !noFio)
        {
            notes.Add(FioRunner.InstallHint);
        }
        if (fio is not null && perf is null)
        {
            notes.Add(PerfEnterCounter.Unavailable + "; the other fio figures are there.");
        }
        if (busy > 0)
        {
            notes.Add($"--busy {busy}: each row ran a second time (named \"[busy {busy}]\") with {busy} CPU-bound processes beside it.");
        }
        return notes;
    }

    // The command as a reader would type it again, without this machine's paths (--dir, --out, --readme).
    private static string CommandLine(Arguments line)
    {
        var parts = new List<string> { "spindle bench" };
        if (line.Has("--quick"))
        {
            parts.Add("--quick");
        }
        if (line.Value("--filter") is { } filter)
        {
            parts.Add($"--filter '{filter}'");
        }
        foreach (string option in new[] { "--rounds", "--busy" })
        {
            if (line.Value(option) is { } value)
            {
                parts.Add($"{option} {value}");
            }
        }
        if (line.Has("--no-fio"))
        {
            parts.Add("--no-fio");
        }
        return string.Join(' ', parts);
    }

    // The rows in the order they run: each quiet row, and with --busy its twin (a fresh instance of the same row) right after it.
    private sealed record RunPlan(List<Workload> Quiet, List<Workload>? Busy, int Neighbours)
    {
        public int Count => Quiet.Count * (Busy is null ? 1 : 2);

        public IEnumerable<Workload> All => Busy is null ? Quiet : Quiet.Concat(Busy);
    }

    private static async Task<BenchReport> RunAsync(RunPlan plan, HarnessSettings settings, string directory, string? fio, string noFio, PerfEnterCounter? perf,
        bool quick, List<string> notes, ToolConsole console)
    {
        var started = DateTimeOffset.UtcNow;
        MachineInfo machine = MachineInfo.Read(directory);   // before the run, so the load average is other work's
        var clock = Stopwatch.StartNew();
        var progress = console.Progress();
        var results = new List<RowResult>();
        using var files = new BenchFiles(directory);
        var fioTools = new FioTools(fio, noFio, perf);
        try
        {
            int done = 0;
            for (int i = 0; i < plan.Quiet.Count; i++)
            {
                RowResult quiet = await RunNextAsync(plan.Quiet[i], null, 0).ConfigureAwait(false);
                results.Add(quiet);
                if (plan.Busy is not null && quiet.Skipped is null)
                {
                    results.Add(await RunNextAsync(plan.Busy[i], quiet, plan.Neighbours).ConfigureAwait(false));
                }
            }

            async Task<RowResult> RunNextAsync(Workload row, RowResult? quietTwin, int neighbours)
            {
                string name = neighbours > 0 ? $"{row.Name} [busy {neighbours}]" : row.Name;
                progress.Report(done, plan.Count, $"row {done + 1} of {plan.Count}: {name}");
                TimeSpan stability = StabilityAllowance(settings, clock.Elapsed, done, plan.Count - done);
                // The rounds of each row share what is left of the budget (a few rows with long calls get fewer rounds).
                TimeSpan roundsTime = TimeSpan.FromTicks(Math.Max(settings.Budget.Ticks - clock.Elapsed.Ticks, settings.Budget.Ticks / 4) / (plan.Count - done) / 2);
                done++;
                using var busy = new BusyNeighbours(neighbours);
                RowResult result = await RunRowAsync(row, files, settings, stability, roundsTime, fioTools, console.Cancellation).ConfigureAwait(false);
                return neighbours == 0 ? result : result.AsBusyTwin(name, quietTwin!, neighbours);
            }
        }
        finally
        {
            progress.Clear();
            foreach (Workload row in plan.All)
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
            Notes = notes,
        };
    }

    // fio, what its column says without it, and perf to count its enters.
    private sealed record FioTools(string? Fio, string NoFio, PerfEnterCounter? Perf);

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
        FioTools tools, CancellationToken cancellation)
    {
        (string? fio, string noFio) = (tools.Fio, tools.NoFio);
        try
        {
            row.Setup(files);
        }
        catch (NotSupportedException e)
        {
            return new RowResult { Name = row.Name, Group = row.Group, IsAsync = row.IsAsync, OperationsPerInvocation = row.OperationsPerInvocation, Results = [], Skipped = e.Message };
        }
        FioRounds? fioRounds = row.Fio is { } job && fio is not null ? new FioRounds(fio, job, settings.FioTime, tools.Perf) : null;
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
            InFlight = row switch
            {
                Workloads.Beyond.RandomReads reads => reads.InFlight,
                Workloads.Beyond.ReadsAtOnce burst => burst.Burst,
                _ => 0,
            },
            HasFioJob = row.Fio is not null,
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
