using System.Diagnostics;
using StackExchange.Redis;
using Tsavorite.core;
using static Spindle.Garnet.Tests.DeviceCalls;

namespace Spindle.Garnet.Tests;

/// <summary>
/// A real full file system (a small tmpfs mounted for the test) under the Spindle device: the device reports
/// ENOSPC with its exception, and Garnet turns it into Redis errors without corrupting a key it acknowledged.
/// </summary>
public sealed class FullDiskTests
{
    [Fact]
    public async Task AWriteToAFullFileSystemCompletesWithTheErrorAndItsException()
    {
        using var mount = SmallTmpfs.TryMount("1m");
        if (mount is null)
        {
            return;
        }
        using var device = new SpindleStorageDevice(Path.Combine(mount.Path, "hlog"));
        device.Initialize(1L << 30);
        using var buffer = new NativeBuffer(256 * 1024);
        DeviceResult result = default;
        ulong address = 0;
        for (int i = 0; i < 16 && result.Error == 0; i++, address += 256 * 1024)
        {
            result = await Write(device, buffer.Address, address, 256 * 1024);
        }
        Assert.NotEqual(0u, result.Error);
        Assert.Equal(0u, result.Bytes);
        IOException error = Assert.IsAssignableFrom<IOException>(result.Exception);
        Assert.Equal(error.HResult & 0xFFFF, (int)result.Error);
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task ACheckpointOntoAFullFileSystemIsARedisErrorAndNoKeyIsCorrupted(bool onSpindle)
    {
        // The checkpoint directory on a 512 KiB file system: the store's hash index alone (1 MiB) does not fit.
        // Garnet's own RandomAccess device runs the same steps, so both must agree on what a full disk gives.
        using var mount = SmallTmpfs.TryMount("512k");
        if (mount is null)
        {
            return;
        }
        using var directory = new TestDirectory();
        const int Keys = 3_000;
        using (var garnet = new EmbeddedGarnet(directory.Path, devices: Devices(onSpindle), checkpointDirectory: mount.Path))
        {
            await GarnetServerTests.SetAll(garnet.Database, Keys);
            var error = Assert.Throws<RedisServerException>(garnet.Save);
            Assert.Contains("checkpoint failed", error.Message);
            // The failed checkpoint took nothing away: every key reads back as written, and the server still writes.
            await GarnetServerTests.CheckAll(garnet.Database, Keys);
            await GarnetServerTests.SetAll(garnet.Database, 100, start: Keys);
        }
        // A restart finds no complete checkpoint to recover: it starts empty rather than from a torn one.
        using (var garnet = new EmbeddedGarnet(directory.Path, recover: true, devices: Devices(onSpindle), checkpointDirectory: mount.Path))
        {
            for (int i = 0; i < Keys; i += 97)
            {
                Assert.False((await garnet.Database.StringGetAsync(EmbeddedGarnet.KeyOf(i))).HasValue, $"key {i} came back from a checkpoint that failed");
            }
        }
    }

    private static INamedDeviceFactoryCreator? Devices(bool onSpindle)
        => onSpindle ? null : new LocalStorageNamedDeviceFactoryCreator(deviceType: DeviceType.RandomAccess);
}

/// <summary>A tmpfs of a given size mounted on a fresh directory, unmounted and removed on dispose (root only).</summary>
internal sealed class SmallTmpfs : IDisposable
{
    private readonly TestDirectory _directory;

    private SmallTmpfs(TestDirectory directory, string path)
    {
        _directory = directory;
        Path = path;
    }

    public string Path { get; }

    /// <summary>Mounts one, or prints why not and returns null (not root, no mount).</summary>
    public static SmallTmpfs? TryMount(string size)
    {
        if (Environment.UserName != "root")
        {
            Console.WriteLine($"skipped: mounting a {size} tmpfs needs root");
            return null;
        }
        var directory = new TestDirectory();
        string path = directory.Sub("tmpfs");
        if (Run("mount", "-t", "tmpfs", "-o", $"size={size}", "tmpfs", path) != 0)
        {
            directory.Dispose();
            Console.WriteLine($"skipped: could not mount a {size} tmpfs");
            return null;
        }
        return new SmallTmpfs(directory, path);
    }

    public void Dispose()
    {
        Run("umount", "-l", Path);
        _directory.Dispose();
    }

    private static int Run(string command, params string[] arguments)
    {
        var start = new ProcessStartInfo(command) { RedirectStandardError = true };
        foreach (string argument in arguments)
        {
            start.ArgumentList.Add(argument);
        }
        using Process process = Process.Start(start)!;
        process.WaitForExit();
        return process.ExitCode;
    }
}
