using System.Net;
using System.Net.Sockets;
using Garnet;
using Garnet.server;
using Spindle.Garnet;
using StackExchange.Redis;

namespace Spindle.Garnet.Tests;

/// <summary>
/// A real Garnet server in this process on a free loopback port, its storage tier (log, checkpoints and, when
/// asked, the append-only file) on Spindle devices in <c>directory</c>, and a StackExchange.Redis connection to it.
/// Log memory is small (64 KiB pages, 1 MiB in memory) so that a few megabytes of values already live on disk.
/// </summary>
internal sealed class EmbeddedGarnet : IDisposable
{
    public const string LogMemory = "1m";
    public const long LogMemoryBytes = 1 << 20;

    private readonly GarnetServer _server;

    public EmbeddedGarnet(string directory, bool aof = false, bool recover = false, Tsavorite.core.INamedDeviceFactoryCreator? devices = null, string? checkpointDirectory = null)
    {
        Port = FreePort();
        var options = new GarnetServerOptions
        {
            EndPoints = [new IPEndPoint(IPAddress.Loopback, Port)],
            EnableStorageTier = true,
            LogDir = directory,
            CheckpointDir = checkpointDirectory ?? directory,
            LogMemorySize = LogMemory,
            PageSize = "64k",
            SegmentSize = "1m",
            IndexMemorySize = "1m",
            DisableObjects = true,
            EnableAOF = aof,
            Recover = recover,
            QuietMode = true,
            DeviceFactoryCreator = devices ?? new SpindleNamedDeviceFactoryCreator(),
        };
        _server = new GarnetServer(options);
        _server.Start();
        Connection = ConnectionMultiplexer.Connect(new ConfigurationOptions
        {
            EndPoints = { new IPEndPoint(IPAddress.Loopback, Port) },
            AllowAdmin = true,
            SyncTimeout = 30_000,
            AsyncTimeout = 30_000,
            AbortOnConnectFail = true,
        });
    }

    public int Port { get; }

    public ConnectionMultiplexer Connection { get; }

    public IDatabase Database => Connection.GetDatabase();

    /// <summary>A checkpoint of the store (Redis SAVE), returned when it is on disk.</summary>
    public void Save() => Assert.Equal("OK", Database.Execute("SAVE").ToString());

    public void Dispose()
    {
        Connection.Dispose();
        _server.Dispose();
    }

    /// <summary>The value of key <paramref name="index"/>: its index repeated, so a value read back from the wrong place shows.</summary>
    public static byte[] ValueOf(int index, int length = 1024)
    {
        byte[] value = new byte[length];
        for (int i = 0; i < length; i += 4)
        {
            BitConverter.TryWriteBytes(value.AsSpan(i), index * 31 + i);
        }
        return value;
    }

    public static string KeyOf(int index) => $"key:{index:D8}";

    private static int FreePort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }
}
