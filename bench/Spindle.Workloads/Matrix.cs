using Spindle.Workloads.Beyond;
using Spindle.Workloads.RandomAccess;
using Spindle.Workloads.FileStreams;

namespace Spindle.Workloads;

/// <summary>SPEC §5's benchmark matrix: every row, in the order the report shows them.</summary>
public static class Matrix
{
    /// <summary>The in-flight counts of the random-read rows.</summary>
    public static readonly int[] QueueDepths = [1, 8, 32, 128];

    /// <summary>Reads started at once in the burst row (<see cref="ReadsAtOnce"/>).</summary>
    public const int BurstSize = 64;

    /// <summary>Pool threads waiting synchronously in the sync-over-async row (<see cref="SyncOverAsync"/>).</summary>
    public const int SyncWaiters = 64;

    /// <summary>The in-flight counts of the queue-depth sweep (O_DIRECT random reads, System.IO against Spindle's default).</summary>
    public static readonly int[] SweepDepths = [1, 2, 4, 8, 16, 32, 64, 128];

    /// <summary>Every row at <paramref name="scale"/>. The caller sets up, runs and disposes them.</summary>
    public static IEnumerable<Workload> Build(MatrixScale scale)
    {
        long large = scale.LargeFile;
        FileOptions[] options = [FileOptions.None, FileOptions.Asynchronous];
        foreach (FileOptions option in options)
        {
            yield return new FileStreamSeek(forward: true, option);
            yield return new FileStreamSeek(forward: false, option);
        }
        yield return new FileStreamGetLength(FileShare.Read);
        yield return new FileStreamGetLength(FileShare.ReadWrite);
        (long File, int Buffer)[] buffered = [(Units.KiB, Units.KiB), (Units.MiB, 512), (Units.MiB, 4 * Units.KiB), (large, 4 * Units.KiB)];
        foreach ((long file, int buffer) in buffered)
        {
            foreach (FileOptions option in options)
            {
                foreach (Workload row in Transfers(file, buffer, option, bufferSize: 4096))
                {
                    yield return row;
                }
            }
        }
        foreach (long file in new[] { Units.MiB, large })
        {
            foreach (FileOptions option in options)
            {
                foreach (Workload row in Transfers(file, 16 * Units.KiB, option, bufferSize: 0))
                {
                    yield return row;
                }
            }
        }
        foreach (long file in new[] { Units.MiB, large })
        {
            yield return new FileStreamTransfer(Direction.Write, async: false, file, 16 * Units.KiB, FileOptions.None, bufferSize: 0, preallocationSize: file);
            yield return new FileStreamTransfer(Direction.Write, async: true, file, 16 * Units.KiB, FileOptions.Asynchronous, bufferSize: 0, preallocationSize: file);
        }
        foreach (long file in new[] { Units.MiB, large })
        {
            yield return new FileStreamCopyToFile(async: false, file);
            yield return new FileStreamCopyToFile(async: true, file);
        }
        yield return new FileStreamTransfer(Direction.Read, async: true, 1_000_000, 8_000, FileOptions.Asynchronous, name: "Net6Post.ReadAsync(1 MB, 8 kB, useAsync)");
        yield return new FileStreamTransfer(Direction.Write, async: true, 1_000_000, 8_000, FileOptions.Asynchronous, name: "Net6Post.WriteAsync(1 MB, 8 kB, useAsync)");
        (long File, int Block)[] randomAccess = [(Units.MiB, 4 * Units.KiB), (large, 16 * Units.KiB)];
        foreach ((long file, int block) in randomAccess)
        {
            yield return new RandomAccessTransfer(Direction.Read, async: false, file, block);
            yield return new RandomAccessTransfer(Direction.Write, async: false, file, block);
            yield return new RandomAccessTransfer(Direction.Read, async: true, file, block);
            yield return new RandomAccessTransfer(Direction.Write, async: true, file, block);
        }
        foreach (int size in new[] { 4 * Units.KiB, 16 * Units.KiB })
        {
            yield return new ScatterGather(Direction.Read, async: false, 4, size, Units.MiB);
            yield return new ScatterGather(Direction.Write, async: false, 4, size, Units.MiB);
            yield return new ScatterGather(Direction.Read, async: true, 4, size, Units.MiB);
            yield return new ScatterGather(Direction.Write, async: true, 4, size, Units.MiB);
        }
        foreach (bool direct in new[] { false, true })
        {
            foreach (int depth in QueueDepths)
            {
                yield return new RandomReads(scale.HugeFile, depth, direct, scale.RandomReadsPerInvocation);
            }
        }
        yield return new ReadsAtOnce(scale.HugeFile, BurstSize, Math.Max(1, scale.RandomReadsPerInvocation / BurstSize));
        yield return new SyncOverAsync(scale.HugeFile, SyncWaiters, scale.RandomReadsPerInvocation);
        yield return new SequentialDirect(Direction.Read, scale.SequentialBytes, Units.MiB, 8);
        yield return new SequentialDirect(Direction.Write, scale.SequentialBytes, Units.MiB, 8);
        yield return new FileCopy(scale.HugeFile);
        foreach (int depth in SweepDepths)
        {
            yield return RandomReads.Sweep(scale.HugeFile, depth, scale.RandomReadsPerInvocation);
        }
        int files = scale == MatrixScale.Quick ? 2_000 : 10_000;
        yield return new Files.FilesContent(Files.FilesContent.Kind.ReadMany, files);
        yield return new Files.FilesContent(Files.FilesContent.Kind.ReadOne, files);
        yield return new Files.FilesContent(Files.FilesContent.Kind.WriteMany, files);
        foreach (Workload row in Durability.DurabilityRows.Build(scale))
        {
            yield return row;
        }
    }

    private static IEnumerable<Workload> Transfers(long file, int userBuffer, FileOptions option, int bufferSize)
    {
        yield return new FileStreamTransfer(Direction.Read, async: false, file, userBuffer, option, bufferSize);
        yield return new FileStreamTransfer(Direction.Write, async: false, file, userBuffer, option, bufferSize);
        yield return new FileStreamTransfer(Direction.Read, async: true, file, userBuffer, option, bufferSize);
        yield return new FileStreamTransfer(Direction.Write, async: true, file, userBuffer, option, bufferSize);
    }
}
