using Spindle.ZoneTree;
using ZoneTree;
using ZoneTree.AbstractFileStream;
using ZoneTree.Options;

namespace Spindle.Clients.Probe;

/// <summary>How the tests, the probe and the bench open a ZoneTree on one file stream provider.</summary>
public static class ZoneTrees
{
    /// <summary>
    /// Opens or creates an <c>int → int</c> tree in <paramref name="directory"/>: on a
    /// <see cref="SpindleFileStreamProvider"/> for <paramref name="engine"/>, or on ZoneTree's own
    /// <see cref="LocalFileStreamProvider"/> when <paramref name="engine"/> is null.
    /// </summary>
    public static IZoneTree<int, int> Open(string directory, IoEngine? engine, WriteAheadLogMode walMode, int mutableSegmentMaxItemCount = 50_000)
    {
        IFileStreamProvider provider = engine is IoEngine chosen ? new SpindleFileStreamProvider(chosen) : new LocalFileStreamProvider();
        return new ZoneTreeFactory<int, int>(provider)
            .SetDataDirectory(directory)
            .SetMutableSegmentMaxItemCount(mutableSegmentMaxItemCount)
            .ConfigureWriteAheadLogOptions(wal => wal.WriteAheadLogMode = walMode)
            .OpenOrCreate();
    }
}

/// <summary>The values the ZoneTree workloads write: never 0, which ZoneTree reads as "deleted" for <c>int</c>.</summary>
public static class ZoneTreeKeys
{
    /// <summary>The value first written for <paramref name="key"/>.</summary>
    public static int ValueOf(int key) => (key * 2) + 1;

    /// <summary>The value an update writes for <paramref name="key"/>.</summary>
    public static int UpdatedValueOf(int key) => -((key * 2) + 1);
}
