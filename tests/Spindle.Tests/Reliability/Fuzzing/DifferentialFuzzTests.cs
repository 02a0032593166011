using Spindle.Tests.Infrastructure;
using Xunit.Abstractions;

namespace Spindle.Tests.Reliability.Fuzzing;

/// <summary>
/// The differential fuzzer: thousands of seeded random programs on System.IO and on Spindle on every
/// engine. CI runs <see cref="CiPrograms"/>; a soak sets <c>SPINDLE_FUZZ_PROGRAMS</c> (and
/// <c>SPINDLE_FUZZ_SEED</c>); a failure prints the program and the command that replays it alone.
/// </summary>
public class DifferentialFuzzTests(ITestOutputHelper output)
{
    public const int CiPrograms = 10_000;

    [Fact]
    public Task RandomAccess_programs_agree_with_System_IO_on_every_engine() =>
        RunPrograms(nameof(RandomAccess_programs_agree_with_System_IO_on_every_engine), RandomAccessProgram.Run);

    private async Task RunPrograms(string testName, Func<long, FuzzSide[], FuzzTotals, string, Task> program)
    {
        FuzzSettings settings = FuzzSettings.FromEnvironment(CiPrograms);
        var totals = new FuzzTotals();
        FuzzDifference? first = null;
        using var dir = new TempDirectory();
        int partitions = settings.Programs == 1 ? 1 : Math.Max(2, Environment.ProcessorCount);
        long faultsBefore = Diagnostics.SyscallFaults.Interrupts + Diagnostics.SyscallFaults.ShortTransfers;

        Task[] workers = Enumerable.Range(0, partitions).Select(partition => Task.Run(async () =>
        {
            FuzzSide[] sides =
            [
                new FuzzSide(dir.File($"p{partition}-system-io"), null),
                .. Enum.GetValues<IoEngine>().Select(engine => new FuzzSide(dir.File($"p{partition}-{engine}"), engine)),
            ];
            try
            {
                for (long i = partition; i < settings.Programs && Volatile.Read(ref first) is null; i += partitions)
                {
                    await program(settings.Seed + i, sides, totals, testName);
                }
            }
            catch (FuzzDifference difference)
            {
                Interlocked.CompareExchange(ref first, difference, null);
            }
            finally
            {
                foreach (FuzzSide side in sides)
                {
                    side.Dispose();
                }
            }
        })).ToArray();

        int limit = FuzzSettings.FromUser ? 7 * 24 * 3600 : 150;
        await Task.WhenAll(workers).WaitAsync(TimeSpan.FromSeconds(limit));

        long faults = Diagnostics.SyscallFaults.Interrupts + Diagnostics.SyscallFaults.ShortTransfers - faultsBefore;
        output.WriteLine($"fuzz {testName}: seed {settings.Seed}, {totals.Programs} programs, {totals.Operations} operations ({totals.Exceptions} of them exceptions), " +
            $"{totals.Comparisons} side-by-side comparisons (System.IO + {Enum.GetValues<IoEngine>().Length} engines), " +
            $"~{faults} EINTR/short-write faults injected (process-wide count), {(first is null ? 0 : 1)} differences");
        if (first is not null)
        {
            Assert.Fail(first.Message);
        }
        Assert.Equal(settings.Programs, totals.Programs);
    }
}
