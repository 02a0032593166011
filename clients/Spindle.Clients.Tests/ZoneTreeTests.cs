using Spindle.Clients.Probe;
using ZoneTree;
using ZoneTree.Options;

namespace Spindle.Clients.Tests;

/// <summary>ZoneTree on SpindleFileStreamProvider against its own LocalFileStreamProvider: the same data after every step.</summary>
public sealed class ZoneTreeTests
{
    private const int Keys = 200_000;

    [Theory]
    [MemberData(nameof(Engines.All), MemberType = typeof(Engines))]
    public void InsertUpdateDeleteScanWithMergesThenReopenMatchesLocalProvider(IoEngine engine)
    {
        using var directory = new TestDirectory();
        var (localScans, localFinal) = RunWorkload(directory.Sub("local"), engine: null);
        var (spindleScans, spindleFinal) = RunWorkload(directory.Sub("spindle"), engine);

        Assert.Equal(localScans.Count, spindleScans.Count);
        for (int i = 0; i < localScans.Count; i++)
        {
            Assert.Equal(localScans[i], spindleScans[i]);
        }
        Assert.Equal(localFinal.Count, spindleFinal.Count);
        Assert.Equal(localFinal, spindleFinal);
    }

    [Theory]
    [MemberData(nameof(Engines.All), MemberType = typeof(Engines))]
    public void ChildKilledAfterItsWriteAheadLogWasFlushedRecoversTheSameData(IoEngine engine)
    {
        using var directory = new TestDirectory();
        long committed = ChildProcess.RunUntilCommitted("zonetree", directory.Path, engine, batch: 5_000, atLeast: 20_000);

        using IZoneTree<int, int> tree = ZoneTrees.Open(directory.Path, engine, WriteAheadLogMode.Sync);
        long recovered = 0;
        using var iterator = tree.CreateIterator();
        while (iterator.Next())
        {
            Assert.Equal(recovered, iterator.CurrentKey); // keys 0.. in order, none missing
            Assert.Equal(ZoneTreeKeys.ValueOf(iterator.CurrentKey), iterator.CurrentValue);
            recovered++;
        }
        Assert.True(recovered >= committed, $"{recovered} keys recovered, {committed} were flushed");
    }

    /// <summary>
    /// Inserts, updates, deletes (merges forced in between) and range scans; then closes, reopens and
    /// reads every key. Returns the scans' results and the final contents, checked against a model.
    /// </summary>
    private static (List<List<KeyValuePair<int, int>>> Scans, SortedDictionary<int, int> Final) RunWorkload(string directory, IoEngine? engine)
    {
        var random = new Random(2024);
        var model = new SortedDictionary<int, int>();
        var scans = new List<List<KeyValuePair<int, int>>>();
        int[] keys = Enumerable.Range(0, Keys).Select(k => k * 3).ToArray();
        random.Shuffle(keys);
        using (IZoneTree<int, int> tree = ZoneTrees.Open(directory, engine, WriteAheadLogMode.Sync, mutableSegmentMaxItemCount: 20_000))
        {
            for (int i = 0; i < keys.Length; i++)
            {
                tree.Upsert(keys[i], ZoneTreeKeys.ValueOf(keys[i]));
                model[keys[i]] = ZoneTreeKeys.ValueOf(keys[i]);
                if (i % 50_000 == 49_999)
                {
                    ForceMerge(tree);
                }
            }
            for (int i = 0; i < Keys / 4; i++)
            {
                int key = keys[random.Next(keys.Length)];
                tree.Upsert(key, ZoneTreeKeys.UpdatedValueOf(key));
                model[key] = ZoneTreeKeys.UpdatedValueOf(key);
            }
            ForceMerge(tree);
            for (int i = 0; i < Keys / 8; i++)
            {
                int key = keys[random.Next(keys.Length)];
                tree.ForceDelete(key);
                model.Remove(key);
            }
            for (int scan = 0; scan < 20; scan++)
            {
                int from = random.Next(Keys * 3);
                int to = from + random.Next(5_000);
                var found = RangeScan(tree, from, to);
                Assert.Equal(model.Where(p => p.Key >= from && p.Key <= to).ToList(), found);
                scans.Add(found);
            }
            ForceMerge(tree);
        }

        using IZoneTree<int, int> reopened = ZoneTrees.Open(directory, engine, WriteAheadLogMode.Sync, mutableSegmentMaxItemCount: 20_000);
        var final = new SortedDictionary<int, int>(RangeScan(reopened, int.MinValue, int.MaxValue).ToDictionary());
        Assert.Equal(model, final);
        foreach (int key in keys.Take(5_000))
        {
            Assert.Equal(model.TryGetValue(key, out int expected), reopened.TryGet(key, out int actual));
            Assert.Equal(expected, actual);
        }
        return (scans, final);
    }

    private static void ForceMerge(IZoneTree<int, int> tree)
    {
        tree.Maintenance.MoveMutableSegmentForward();
        tree.Maintenance.StartMergeOperation()?.Join();
    }

    private static List<KeyValuePair<int, int>> RangeScan(IZoneTree<int, int> tree, int from, int to)
    {
        var found = new List<KeyValuePair<int, int>>();
        using var iterator = tree.CreateIterator();
        iterator.Seek(from);
        while (iterator.Next() && iterator.CurrentKey <= to)
        {
            found.Add(new KeyValuePair<int, int>(iterator.CurrentKey, iterator.CurrentValue));
        }
        return found;
    }
}
