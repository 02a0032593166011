namespace Spindle.Tool.Bench;

/// <summary>Where the reads of a dispatch cell go.</summary>
public enum DispatchStorage
{
    /// <summary>A file on the benchmark directory's disk, opened with O_DIRECT.</summary>
    DiskDirect,

    /// <summary>The same file through the page cache, read once first (warm).</summary>
    PageCache,

    /// <summary>A file on tmpfs opened with O_DIRECT (Linux 6.6 or later).</summary>
    TmpfsDirect,

    /// <summary>A zram RAM block device, the raw device opened with O_DIRECT (needs root).</summary>
    ZramDirect,

    /// <summary>The tmpfs file through the page cache (its only copy: tmpfs keeps files in memory).</summary>
    TmpfsCached,

    /// <summary>The disk file through FUSE (the benchmark directory mounted again with bindfs), opened with O_DIRECT.</summary>
    FuseDirect,

    /// <summary>The same through FUSE and the page cache, read once first (warm).</summary>
    FuseCached,
}

/// <summary>
/// One cell of the dispatch matrix: a storage, the callers in flight, the CPU each caller spends after
/// each read, and whether the process may use one core or all of them.
/// </summary>
/// <param name="Storage">Where the reads go.</param>
/// <param name="InFlight">Callers, each with one read in flight.</param>
/// <param name="SpinMicroseconds">CPU time each caller spends after each read (the continuation's work).</param>
/// <param name="OneCore">True: measured in a child process whose affinity is one CPU; false: every CPU this process may use.</param>
public sealed record DispatchCell(DispatchStorage Storage, int InFlight, int SpinMicroseconds, bool OneCore)
{
    /// <summary>The prefix of every cell name: <c>--filter 'Dispatch*'</c> runs the whole matrix.</summary>
    public const string Prefix = "Dispatch/";

    /// <summary>The cell's row name, e.g. <c>Dispatch/tmpfs-direct/qd32/spin100us/allcores</c>, for <c>--filter</c>.</summary>
    public string Name => $"{Prefix}{StorageName(Storage)}/qd{InFlight}/spin{SpinMicroseconds}us/{(OneCore ? "1core" : "allcores")}";

    /// <summary>The same cell on the other core count (its scaling partner).</summary>
    public DispatchCell Partner() => this with { OneCore = !OneCore };

    /// <summary>The storage's name in row names and reports.</summary>
    public static string StorageName(DispatchStorage storage) => storage switch
    {
        DispatchStorage.DiskDirect => "disk-direct",
        DispatchStorage.PageCache => "pagecache",
        DispatchStorage.TmpfsDirect => "tmpfs-direct",
        DispatchStorage.ZramDirect => "zram-direct",
        DispatchStorage.TmpfsCached => "tmpfs-cached",
        DispatchStorage.FuseDirect => "fuse-direct",
        DispatchStorage.FuseCached => "fuse-cached",
        _ => storage.ToString(),
    };
}

/// <summary>
/// The dispatch matrix: storage × in flight × continuation CPU × cores, System.IO's
/// <c>RandomAccess.ReadAsync</c> against Spindle's default, fio's two engines as the limit where the
/// continuation does nothing.
/// </summary>
public static class DispatchMatrix
{
    /// <summary>Callers in flight.</summary>
    public static readonly int[] InFlights = [1, 8, 32, 128];

    /// <summary>Microseconds of CPU per read in each continuation.</summary>
    public static readonly int[] Spins = [0, 20, 100, 500];

    /// <summary>The storages the issue's matrix names; every cell of <see cref="InFlights"/> × <see cref="Spins"/> × cores.</summary>
    public static readonly DispatchStorage[] Storages = [DispatchStorage.DiskDirect, DispatchStorage.PageCache, DispatchStorage.TmpfsDirect, DispatchStorage.ZramDirect];

    /// <summary>
    /// Storages where io_uring hands every request to its kernel workers (tmpfs through the page cache; FUSE), measured
    /// with and without continuation work only (<see cref="ExtraSpins"/>), so that they add minutes, not a second matrix.
    /// </summary>
    public static readonly DispatchStorage[] ExtraStorages = [DispatchStorage.TmpfsCached, DispatchStorage.FuseDirect, DispatchStorage.FuseCached];

    /// <summary>Continuation CPU of the <see cref="ExtraStorages"/>' cells.</summary>
    public static readonly int[] ExtraSpins = [0, 100];

    /// <summary>Every cell of the full run in report order (storage, in flight, spin, all cores before one), or the <c>--quick</c> subset.</summary>
    public static IReadOnlyList<DispatchCell> Build(bool quick)
    {
        if (quick)
        {
            return [.. from storage in new[] { DispatchStorage.DiskDirect, DispatchStorage.TmpfsDirect }
                       from inFlight in new[] { 1, 32 }
                       from spin in new[] { 0, 100 }
                       select new DispatchCell(storage, inFlight, spin, OneCore: false),
                    new DispatchCell(DispatchStorage.TmpfsCached, 32, 0, OneCore: false)];
        }
        return [.. from storage in Storages
                   from inFlight in InFlights
                   from spin in Spins
                   from oneCore in new[] { false, true }
                   select new DispatchCell(storage, inFlight, spin, oneCore),
                .. from storage in ExtraStorages
                   from inFlight in InFlights
                   from spin in ExtraSpins
                   from oneCore in new[] { false, true }
                   select new DispatchCell(storage, inFlight, spin, oneCore)];
    }
}

/// <summary>How long each dispatch cell measures.</summary>
/// <param name="Rounds">Rounds; each runs every contender (and fio's engines where the continuation is 0) once, in a rotating order.</param>
/// <param name="WarmupTime">Time each contender runs in one warm-up pass; passes go on until two in a row compiled no method (JIT tiers, thread pool, ring).</param>
/// <param name="RoundTime">One contender's time in one round; fio's <c>--runtime</c> too.</param>
/// <param name="FileSize">Bytes the reads are spread over: small, so that the disk's size does not matter and setup is quick.</param>
public sealed record DispatchSettings(int Rounds, TimeSpan WarmupTime, TimeSpan RoundTime, long FileSize)
{
    /// <summary>The full run: 7 rounds of half a second per contender (20–40 minutes for the whole matrix).</summary>
    public static DispatchSettings Full { get; } = new(7, TimeSpan.FromMilliseconds(25), TimeSpan.FromMilliseconds(500), 256L << 20);

    /// <summary><c>--quick</c>: a few seconds per cell (fio's start-up, twice a round where C = 0, dominates).</summary>
    public static DispatchSettings Quick { get; } = new(3, TimeSpan.FromMilliseconds(5), TimeSpan.FromMilliseconds(100), 64L << 20);
}
