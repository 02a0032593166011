using FASTER.core;
using Spindle.Faster;

namespace Spindle.Clients.Probe;

/// <summary>How the tests, the probe and the bench open a FasterLog on one device kind.</summary>
public static class FasterLogs
{
    /// <summary>
    /// Opens (recovering what is committed) a FasterLog in <paramref name="directory"/>: data on a
    /// <see cref="SpindleDevice"/> on <paramref name="engine"/>, commit records through a
    /// <see cref="SpindleNamedDeviceFactory"/> (<paramref name="directIO"/>: with O_DIRECT); or, with <paramref name="engine"/> null, on FASTER's Linux
    /// defaults (<see cref="ManagedLocalStorageDevice"/> and <see cref="LocalStorageNamedDeviceFactory"/>).
    /// </summary>
    public static (FasterLog Log, IDevice Device) Open(string directory, IoEngine? engine, int pageSizeBits = 16, int memorySizeBits = 20, int segmentSizeBits = 22, bool directIO = false, bool dataSyncWrites = false)
    {
        (IDevice device, INamedDeviceFactory factory) = FasterDevices.Open(directory, engine, directIO, dataSyncWrites);
        var settings = new FasterLogSettings
        {
            LogDevice = device,
            PageSizeBits = pageSizeBits,
            MemorySizeBits = memorySizeBits,
            SegmentSizeBits = segmentSizeBits,
            LogCommitManager = new DeviceLogCommitCheckpointManager(factory, new DefaultCheckpointNamingScheme(Path.Combine(directory, "commits"))),
        };
        return (new FasterLog(settings), device);
    }
}

/// <summary>How the tests and the bench open a FasterKV on one device kind.</summary>
public static class FasterStores
{
    /// <summary>
    /// Creates a <c>long → TValue</c> store in <paramref name="directory"/> whose log keeps
    /// 2^<paramref name="memorySizeBits"/> bytes in memory, on a <see cref="SpindleDevice"/> for
    /// <paramref name="engine"/> (checkpoints through <see cref="SpindleNamedDeviceFactory"/>), or on FASTER's
    /// Linux defaults when <paramref name="engine"/> is null.
    /// </summary>
    public static (FasterKV<long, TValue> Store, IDevice Device) Open<TValue>(string directory, IoEngine? engine, int memorySizeBits, int pageSizeBits = 12, int segmentSizeBits = 22, long indexBuckets = 1L << 16, bool directIO = false)
    {
        (IDevice device, INamedDeviceFactory factory) = FasterDevices.Open(directory, engine, directIO);
        var log = new LogSettings
        {
            LogDevice = device,
            PageSizeBits = pageSizeBits,
            MemorySizeBits = memorySizeBits,
            SegmentSizeBits = segmentSizeBits,
        };
        var checkpoints = new CheckpointSettings
        {
            CheckpointManager = new DeviceLogCommitCheckpointManager(factory, new DefaultCheckpointNamingScheme(Path.Combine(directory, "checkpoints"))),
        };
        return (new FasterKV<long, TValue>(indexBuckets, log, checkpoints), device);
    }
}

/// <summary>The log device and the checkpoint/commit device factory of one device kind.</summary>
internal static class FasterDevices
{
    /// <summary>
    /// A <see cref="SpindleDevice"/> on <paramref name="engine"/> with a <see cref="SpindleNamedDeviceFactory"/>
    /// (<paramref name="directIO"/>: with O_DIRECT), or FASTER's Linux defaults when <paramref name="engine"/> is null.
    /// </summary>
    internal static (IDevice Device, INamedDeviceFactory Factory) Open(string directory, IoEngine? engine, bool directIO, bool dataSyncWrites = false)
    {
        if (engine is IoEngine chosen)
        {
            var options = new SpindleDeviceOptions { Engine = chosen, DirectIO = directIO, DataSyncWrites = dataSyncWrites };
            return (new SpindleDevice(Path.Combine(directory, "hlog"), options), new SpindleNamedDeviceFactory(options));
        }
        return (new ManagedLocalStorageDevice(Path.Combine(directory, "hlog")), new LocalStorageNamedDeviceFactory());
    }
}
