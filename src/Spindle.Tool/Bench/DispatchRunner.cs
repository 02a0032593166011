using System.Runtime;
using Microsoft.Win32.SafeHandles;
using Spindle.Workloads;
using Spindle.Workloads.Dispatch;

namespace Spindle.Tool.Bench;

/// <summary>
/// Measures one dispatch cell in this process: System.IO and Spindle's default on one handle, each
/// warmed up, then rounds in a rotating order with fio's io_uring and psync engines taking their turn
/// where the continuation does nothing, so that every figure comes from the same minutes of the machine.
/// </summary>
internal static class DispatchRunner
{
    /// <summary>The contenders of every cell: System.IO's <c>RandomAccess.ReadAsync</c> and Spindle's default.</summary>
    public static readonly IReadOnlyList<Contender> Contenders = [Contender.SystemIO, Contender.SpindleAuto];

    private const int SamplesPerRound = 1 << 20;   // latencies kept per round; more reads are counted, not kept
    private const int MinWarmupPasses = 32;        // code run once per turn (two turns a pass) reaches tier 1 after 30 calls to tier-1-instrumented code and 30 more
    private const int QuietWarmupPasses = 2;       // one quiet pass may only mean the compiler's thread got no CPU (a loaded core)
    private const int MaxWarmupPasses = 64;        // a cell whose compilation never settles is measured anyway, its count reported

    /// <summary>Measures <paramref name="cell"/> on <paramref name="target"/>; fio runs where the continuation is 0 and <paramref name="fio"/> is given.</summary>
    public static async Task<DispatchCellResult> MeasureAsync(DispatchCell cell, DispatchTarget target, DispatchSettings settings, double spinRate,
        string? fio, string noFio, CancellationToken cancellation)
    {
        using SafeFileHandle handle = target.Direct
            ? DirectIo.OpenHandle(target.Path)
            : File.OpenHandle(target.Path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite, FileOptions.Asynchronous);
        if (!target.Direct)
        {
            Warm(handle, target.Size);
        }
        using var callers = new DispatchCallers(handle, target.Size, cell.InFlight, CpuSpin.Iterations(cell.SpinMicroseconds, spinRate));
        var samples = new DispatchSamples(SamplesPerRound);
        int warmupPasses = await WarmUpAsync(callers, samples, settings, cancellation).ConfigureAwait(false);
        long compiledInRounds = 0;

        bool fioDue = cell.SpinMicroseconds == 0;
        FioRounds? uring = fioDue && fio is not null ? new FioRounds(fio, FioJob(target, cell.InFlight, "io_uring"), settings.RoundTime) : null;
        FioRounds? psync = fioDue && fio is not null ? new FioRounds(fio, FioJob(target, cell.InFlight, "psync"), settings.RoundTime) : null;
        int rounds = settings.Rounds;
        var figures = Contenders.Select(_ => new Figures(rounds)).ToArray();
        int turns = Contenders.Count + (uring is null ? 0 : 2);
        for (int round = 0; round < rounds; round++)
        {
            for (int k = 0; k < turns; k++)
            {
                cancellation.ThrowIfCancellationRequested();
                int i = (k + round) % turns;
                if (i >= Contenders.Count)
                {
                    await (i == Contenders.Count ? uring! : psync!).RunAsync(cancellation).ConfigureAwait(false);
                    continue;
                }
                compiledInRounds += await MeasureTurnAsync(callers, samples, Contenders[i], settings.RoundTime, figures[i], round).ConfigureAwait(false);
            }
        }
        return new DispatchCellResult
        {
            Cell = cell,
            Storage = target.Description,
            Processors = Environment.ProcessorCount,
            Results = [.. Contenders.Select((c, i) => figures[i].Result(c))],
            FioIoUring = uring?.Median,
            FioPsync = psync?.Median,
            FioNote = !fioDue ? "—" : fio is null ? noFio : uring!.Failure ?? psync!.Failure ?? "—",
            WarmupPasses = warmupPasses,
            MethodsCompiledInRounds = compiledInRounds,
        };
    }

    /// <summary>
    /// fio's job for a cell: io_uring with one job and <c>iodepth</c> = in flight, or psync with one
    /// thread per caller (<c>numjobs</c> = in flight), the figures of all jobs summed.
    /// </summary>
    public static FioJob FioJob(DispatchTarget target, int inFlight, string engine)
    {
        return engine == "io_uring"
            ? new FioJob("randread", DispatchCallers.BlockSize, engine, inFlight, target.Direct, target.Path, target.Size)
            : Spindle.Workloads.FioJob.ThreadPerCaller("randread", DispatchCallers.BlockSize, inFlight, target.Direct, target.Path, target.Size);
    }

    /// <summary>
    /// Runs the contenders in turn, each for the warm-up time, until at least <see cref="MinWarmupPasses"/>
    /// passes ran and the last <see cref="QuietWarmupPasses"/> compiled no method while their callers ran (the
    /// paths of both have their tier-1 code), or <see cref="MaxWarmupPasses"/> passes ran; returns the passes. The runtime compiles tier-1 code on a
    /// thread of its own after a method's 30th call: in a one-core cell that thread takes the core the reads
    /// need, and rounds measured before it is done compare compilation (more of it on Spindle's side, whose
    /// code is not precompiled as the runtime's is) rather than the paths. A pass that compiled nothing is not
    /// enough alone: code run once per turn is still on its way to tier 1 then.
    /// </summary>
    private static async Task<int> WarmUpAsync(DispatchCallers callers, DispatchSamples samples, DispatchSettings settings, CancellationToken cancellation)
    {
        var scratch = new Figures(1);
        int quiet = 0; // passes in a row that compiled nothing
        for (int pass = 1; ; pass++)
        {
            long compiled = 0;
            foreach (Contender contender in Contenders)
            {
                cancellation.ThrowIfCancellationRequested();
                compiled += await MeasureTurnAsync(callers, samples, contender, settings.WarmupTime, scratch, 0).ConfigureAwait(false);
            }
            quiet = compiled == 0 ? quiet + 1 : 0;
            if ((pass >= MinWarmupPasses && quiet >= QuietWarmupPasses) || pass == MaxWarmupPasses)
            {
                return pass;
            }
        }
    }

    // One contender's turn, the same code in warm-up and rounds (a round runs nothing the warm-up did not); returns the
    // methods the JIT compiled while the callers ran.
    private static async Task<long> MeasureTurnAsync(DispatchCallers callers, DispatchSamples samples, Contender contender, TimeSpan duration, Figures figures, int round)
    {
        samples.Clear();
        long compiledBefore = JitInfo.GetCompiledMethodCount();
        long cpuBefore = ProcessCpu.Nanoseconds();
        DispatchRound measured = await callers.RunAsync(contender, duration, samples).ConfigureAwait(false);
        long cpuAfter = ProcessCpu.Nanoseconds();
        long compiled = JitInfo.GetCompiledMethodCount() - compiledBefore;
        figures.Add(round, measured, cpuBefore < 0 || cpuAfter < 0 ? double.NaN : (double)(cpuAfter - cpuBefore), samples.Samples);
        return compiled;
    }

    private static void Warm(SafeFileHandle handle, long length)
    {
        byte[] chunk = new byte[1 << 20];
        for (long offset = 0; offset < length; offset += chunk.Length)
        {
            if (System.IO.RandomAccess.Read(handle, chunk, offset) == 0)
            {
                break;
            }
        }
    }

    // One contender's rounds.
    private sealed class Figures(int rounds)
    {
        private readonly double[] _operationsPerSecond = new double[rounds];
        private readonly double[] _cpu = new double[rounds];
        private readonly double[] _p50 = new double[rounds];
        private readonly double[] _p99 = new double[rounds];
        private double _worst;

        public void Add(int round, DispatchRound measured, double cpuNs, Span<long> samples)
        {
            _operationsPerSecond[round] = measured.OperationsPerSecond;
            _cpu[round] = measured.Operations > 0 ? cpuNs / measured.Operations : double.NaN;
            samples.Sort();
            _p50[round] = Percentiles.Nanoseconds(samples, 50);
            _p99[round] = Percentiles.Nanoseconds(samples, 99);
            _worst = Math.Max(_worst, measured.WorstWaitNs);
        }

        public DispatchContenderResult Result(Contender contender) => new(contender,
            Median(_operationsPerSecond), _operationsPerSecond.Min(), _operationsPerSecond.Max(),
            Median(_cpu), Median(_p50), Median(_p99), _worst, _operationsPerSecond.Length);

        // A figure the kernel did not give (NaN) is left out.
        private static double Median(double[] values)
        {
            double[] known = [.. values.Where(double.IsFinite).Order()];
            return known.Length == 0 ? double.NaN
                : known.Length % 2 == 1 ? known[known.Length / 2] : (known[known.Length / 2 - 1] + known[known.Length / 2]) / 2;
        }
    }
}
