using Spindle.Garnet;
using StackExchange.Redis;

namespace Spindle.Garnet.Tests;

/// <summary>
/// A real Garnet server with its storage tier on Spindle, driven through a real Redis client: data several times
/// larger than the log memory, a checkpoint and a restart, the append-only file and its replay.
/// </summary>
public sealed class GarnetServerTests
{
    private const int Keys = 6_000; // 1 KiB values: about 6 MiB, six times the log memory

    [Theory]
    [InlineData(IoEngine.Sync)] // the default: reads complete on the session's own thread, inside the device's ReadAsync
    [InlineData(IoEngine.Auto)] // io_uring: completions run where they are reaped, sessions reap their own in TryComplete
    public async Task ValuesSeveralTimesLargerThanLogMemoryReadBackIdentical(IoEngine readEngine)
    {
        using var directory = new TestDirectory();
        var devices = new SpindleNamedDeviceFactoryCreator(new SpindleStorageDeviceOptions { ReadEngine = readEngine });
        using (var garnet = new EmbeddedGarnet(directory.Path, devices: devices))
        {
            await SetAll(garnet.Database, Keys);
            // Twice: the second pass reads what the first pass's reads brought back from disk too.
            await CheckAll(garnet.Database, Keys);
            await CheckAll(garnet.Database, Keys);
            Assert.True(LogBytesOnDisk(directory.Path) >= 4 * EmbeddedGarnet.LogMemoryBytes, "the values must live on the Spindle device, not only in memory");
        }
    }

    [Fact]
    public async Task CheckpointAndRestartRecoversEveryKey()
    {
        using var directory = new TestDirectory();
        using (var garnet = new EmbeddedGarnet(directory.Path))
        {
            await SetAll(garnet.Database, Keys);
            garnet.Save();
        }
        using (var garnet = new EmbeddedGarnet(directory.Path, recover: true))
        {
            await CheckAll(garnet.Database, Keys);
        }
    }

    [Fact]
    public async Task AppendOnlyFileOnSpindleIsReplayedAfterRestart()
    {
        using var directory = new TestDirectory();
        using (var garnet = new EmbeddedGarnet(directory.Path, aof: true))
        {
            await SetAll(garnet.Database, Keys);
            // Overwrite some keys after the last checkpoint (there is none): only the AOF holds them.
            for (int i = 0; i < Keys; i += 7)
            {
                await garnet.Database.StringSetAsync(EmbeddedGarnet.KeyOf(i), EmbeddedGarnet.ValueOf(i + Keys));
            }
            garnet.Database.Execute("COMMITAOF"); // waits until the AOF is on the device (a Redis error would throw)
        }
        Assert.True(Directory.EnumerateFiles(directory.Path, "aof.log.*", SearchOption.AllDirectories).Any(f => new FileInfo(f).Length > 0), "the AOF was written through the Spindle device");
        using (var garnet = new EmbeddedGarnet(directory.Path, aof: true, recover: true))
        {
            for (int i = 0; i < Keys; i++)
            {
                byte[]? value = await garnet.Database.StringGetAsync(EmbeddedGarnet.KeyOf(i));
                Assert.NotNull(value);
                Assert.True(value.AsSpan().SequenceEqual(EmbeddedGarnet.ValueOf(i % 7 == 0 ? i + Keys : i)), $"key {i} differs after AOF replay");
            }
        }
    }

    internal static async Task SetAll(IDatabase database, int keys, int start = 0)
    {
        var batch = new List<Task<bool>>(256);
        for (int i = start; i < start + keys; i++)
        {
            batch.Add(database.StringSetAsync(EmbeddedGarnet.KeyOf(i), EmbeddedGarnet.ValueOf(i)));
            if (batch.Count == 256)
            {
                Assert.All(await Task.WhenAll(batch), Assert.True);
                batch.Clear();
            }
        }
        Assert.All(await Task.WhenAll(batch), Assert.True);
    }

    internal static async Task CheckAll(IDatabase database, int keys)
    {
        var batch = new List<(int Index, Task<RedisValue> Value)>(256);
        for (int i = 0; i < keys; i++)
        {
            batch.Add((i, database.StringGetAsync(EmbeddedGarnet.KeyOf(i))));
            if (batch.Count == 256 || i == keys - 1)
            {
                foreach (var (index, value) in batch)
                {
                    byte[]? bytes = await value;
                    Assert.NotNull(bytes);
                    Assert.True(bytes.AsSpan().SequenceEqual(EmbeddedGarnet.ValueOf(index)), $"key {index} differs");
                }
                batch.Clear();
            }
        }
    }

    private static long LogBytesOnDisk(string directory)
        => Directory.EnumerateFiles(directory, "hlog.*", SearchOption.AllDirectories).Sum(f => new FileInfo(f).Length);
}
