using FASTER.core;
using Spindle.Clients.Probe;

namespace Spindle.Clients.Tests;

/// <summary>FasterKV on SpindleDevice with a log far larger than its memory: reads served from the device, checkpoint, recovery.</summary>
public sealed class FasterKvTests
{
    private const int Keys = 20_000;
    private const int MemorySizeBits = 14; // 16 KiB (4 pages) of log in memory, for ~600 KB of records

    [Theory]
    [MemberData(nameof(Engines.AllAndAutoDirect), MemberType = typeof(Engines))]
    public async Task LargerThanMemoryUpsertsReadsCheckpointAndRecoveryKeepEveryValue(IoEngine engine, bool directIO)
    {
        using var directory = new TestDirectory();
        var (store, device) = FasterStores.Open<long>(directory.Path, engine, MemorySizeBits, directIO: directIO);
        long pendingReads;
        using (var session = store.For(new SimpleFunctions<long, long>()).NewSession<SimpleFunctions<long, long>>())
        {
            for (long key = 0; key < Keys; key++)
            {
                session.Upsert(key, ValueOf(key, version: 0));
            }
            // Update every third key: the new records go to the tail, the old ones stay on the device.
            for (long key = 0; key < Keys; key += 3)
            {
                session.Upsert(key, ValueOf(key, version: 1));
            }
            pendingReads = ReadAll(session);
        }
        Assert.True(pendingReads > Keys / 2, $"only {pendingReads} reads went to the device");

        var (checkpointed, token) = await store.TakeFullCheckpointAsync(CheckpointType.FoldOver);
        Assert.True(checkpointed);
        store.Dispose();
        device.Dispose();

        var (recovered, recoveredDevice) = FasterStores.Open<long>(directory.Path, engine, MemorySizeBits, directIO: directIO);
        try
        {
            await recovered.RecoverAsync(token);
            using var session = recovered.For(new SimpleFunctions<long, long>()).NewSession<SimpleFunctions<long, long>>();
            ReadAll(session);
        }
        finally
        {
            recovered.Dispose();
            recoveredDevice.Dispose();
        }
    }

    private static long ValueOf(long key, int version) => (key * 1_000_003) ^ (version == 0 ? 0x5A5A5A5AL : -0x5A5A5A5BL);

    private static long Expected(long key) => ValueOf(key, key % 3 == 0 ? 1 : 0);

    /// <summary>Reads every key and checks its value; returns how many reads had to wait for the device.</summary>
    private static long ReadAll(ClientSession<long, long, long, long, Empty, SimpleFunctions<long, long>> session)
    {
        long pending = 0;
        for (long key = 0; key < Keys; key++)
        {
            var (status, output) = session.Read(key);
            if (status.IsPending)
            {
                pending++;
                if (pending % 256 == 0)
                {
                    CheckCompleted(session);
                }
                continue;
            }
            Assert.True(status.Found, $"key {key} not found");
            Assert.Equal(Expected(key), output);
        }
        CheckCompleted(session);
        return pending;
    }

    private static void CheckCompleted(ClientSession<long, long, long, long, Empty, SimpleFunctions<long, long>> session)
    {
        session.CompletePendingWithOutputs(out var outputs, wait: true);
        using (outputs)
        {
            while (outputs.Next())
            {
                long key = outputs.Current.Key;
                Assert.True(outputs.Current.Status.Found, $"key {key} not found on the device");
                Assert.Equal(Expected(key), outputs.Current.Output);
            }
        }
    }
}
