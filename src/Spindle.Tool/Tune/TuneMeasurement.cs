using System.Diagnostics;

namespace Spindle.Tool.Tune;

/// <summary>One measured combination of seed 003's sweep.</summary>
/// <param name="Direction">Write or read.</param>
/// <param name="Buffer">The stream's buffer size.</param>
/// <param name="Block">The bytes per call.</param>
/// <param name="Calls">Read/Write calls per pass (the seed's "Write calls").</param>
/// <param name="Option">The options.</param>
/// <param name="Time">The median time of a pass over the whole file.</param>
/// <param name="Extrapolated">True when a pass hit the time cap and its time was scaled up from the part done.</param>
public sealed record TuneMeasurement(Workloads.Direction Direction, int Buffer, int Block, long Calls, TuneOption Option, TimeSpan Time, bool Extrapolated)
{
    /// <summary>How many passes <see cref="Time"/> is the median of.</summary>
    public int Passes { get; init; } = 1;

    /// <summary>
    /// The relative half-width of the 95 % interval of <see cref="Time"/> over its passes (0.04 = ±4 %; the
    /// passes' whole range when there are few); NaN for a single pass.
    /// </summary>
    public double Spread { get; init; } = double.NaN;

    /// <summary>True for a finalist: measured again, side by side with the other finalists.</summary>
    public bool Final { get; init; }
}

/// <summary>What the read passes measure.</summary>
public enum ReadCase
{
    /// <summary>
    /// The file's pages are dropped from the page cache before each pass (<c>posix_fadvise(DONTNEED)</c> after
    /// <c>fsync</c>, allowed for any file the user can open), so reads come from the device.
    /// </summary>
    Cold,

    /// <summary>The file is in the page cache: what repeated reads of a hot file see.</summary>
    Warm,
}

/// <summary>Writes and reads the sweep's file through a stream, the way the seed's program did.</summary>
internal sealed class TunePass(string path, long fileSize, TimeSpan cap, ReadCase readCase = ReadCase.Warm) : IDisposable
{
    // Page-aligned like a real I/O buffer; the direct stream takes unaligned blocks too, through its aligned window.
    private Workloads.AlignedBuffer? _block;

    /// <summary>Writes the whole file once with the combination; returns the time and whether it was capped.</summary>
    public (TimeSpan Time, bool Capped) Write(int buffer, int block, TuneOption option)
    {
        Memory<byte> data = Block(block);
        long start = Stopwatch.GetTimestamp();
        long written = 0;
        using (Stream stream = Open(FileMode.Create, FileAccess.Write, buffer, option))
        {
            while (written < fileSize)
            {
                int count = (int)Math.Min(data.Length, fileSize - written);
                stream.Write(data.Span[..count]);
                written += count;
                if (Stopwatch.GetElapsedTime(start) > cap && written < fileSize)
                {
                    break;
                }
            }
        }
        return Scale(Stopwatch.GetElapsedTime(start), written);
    }

    /// <summary>Reads the whole file once with the combination.</summary>
    public (TimeSpan Time, bool Capped) Read(int buffer, int block, TuneOption option)
    {
        Memory<byte> data = Block(block);
        if (readCase == ReadCase.Cold)
        {
            PageCache.Drop(path);
        }
        long start = Stopwatch.GetTimestamp();
        long read = 0;
        using (Stream stream = Open(FileMode.Open, FileAccess.Read, buffer, option))
        {
            int n;
            while ((n = stream.Read(data.Span)) > 0)
            {
                read += n;
                if (Stopwatch.GetElapsedTime(start) > cap && read < fileSize)
                {
                    break;
                }
            }
        }
        return Scale(Stopwatch.GetElapsedTime(start), read);
    }

    /// <summary>Which stream the sweep measures, for the report.</summary>
    public static string StreamName => "SpindleFileStream";

    private (TimeSpan, bool) Scale(TimeSpan elapsed, long done) =>
        done >= fileSize || done == 0 ? (elapsed, false) : (elapsed * ((double)fileSize / done), true);

    private Memory<byte> Block(int size)
    {
        if (_block is null || _block.Memory.Length != size)
        {
            ((IDisposable?)_block)?.Dispose();
            _block = new Workloads.AlignedBuffer(size);
            Random.Shared.NextBytes(_block.Memory.Span);
        }
        return _block.Memory;
    }

    /// <summary>Frees the aligned block.</summary>
    public void Dispose() => ((IDisposable?)_block)?.Dispose();

    private Stream Open(FileMode mode, FileAccess access, int buffer, TuneOption option)
    {
        var options = new SpindleFileOptions
        {
            Mode = mode, Access = access, Share = FileShare.None, BufferSize = buffer, Options = option.Options, DirectIO = option.Direct,
        };
        return new SpindleFileStream(path, options);
    }
}
