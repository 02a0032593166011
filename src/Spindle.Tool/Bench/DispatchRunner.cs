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
        foreach (Contender contender in Contenders)
        {
            await callers.RunAsync(contender, settings.WarmupTime, samples: null).ConfigureAwait(false);
        }

        bool fioDue = cell.SpinMicroseconds == 0;
        FioRounds? uring = fioDue && fio is not null ? new FioRounds(fio, FioJob(target, cell.InFlight, "io_uring"), settings.RoundTime) : null;
        FioRounds? psync = fioDue && fio is not null ? new FioRounds(fio, FioJob(target, cell.InFlight, "psync"), settings.RoundTime) : null;
        int rounds = settings.Rounds;
        var figures = Contenders.Select(_ => new Figures(rounds)).ToArray();
        var samples = new DispatchSamples(SamplesPerRound);
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
                samples.Clear();
                long cpuBefore = ProcessCpu.Nanoseconds();
                DispatchRound measured = await callers.RunAsync(Contenders[i], settings.RoundTime, samples).ConfigureAwait(false);
                long cpuAfter = ProcessCpu.Nanoseconds();
                figures[i].Add(round, measured, cpuBefore < 0 || cpuAfter < 0 ? double.NaN : (double)(cpuAfter - cpuBefore), samples.Samples);
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
        };
    }

    /// <summary>
    /// fio's job for a cell: io_uring with one job and <c>iodepth</c> = in flight, or psync with one
    /// thread per caller (<c>numjobs</c> = in flight), the figures of all jobs summed.
    /// </summary>
    public static FioJob FioJob(DispatchTarget target, int inFlight, string engine)
    {
        bool uring = engine == "io_uring";
        return new FioJob("randread", DispatchCallers.BlockSize, engine, uring ? inFlight : 1, target.Direct, target.Path, target.Size)
        {
            ExtraArguments = uring ? [] : [$"--numjobs={inFlight}", "--thread", "--group_reporting"],
        };
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
