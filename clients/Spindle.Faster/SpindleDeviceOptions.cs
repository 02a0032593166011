using FASTER.core;

namespace Spindle.Faster;

/// <summary>How a <see cref="SpindleDevice"/> opens and drives its segment files. Defaults in one place.</summary>
public sealed class SpindleDeviceOptions
{
    internal static readonly SpindleDeviceOptions Default = new();

    /// <summary>The engine reads and writes run on. Default: <see cref="IoEngine.Auto"/> (io_uring where the kernel allows it).</summary>
    public IoEngine Engine { get; init; } = IoEngine.Auto;

    /// <summary>
    /// Open segment files with <c>O_DIRECT</c>, bypassing the page cache (as FASTER's native devices do).
    /// Where the file system refuses it, files open buffered and <see cref="SpindleDevice.IsDirectIO"/> is false.
    /// Default: false, through the page cache, as FASTER's <see cref="ManagedLocalStorageDevice"/> is on Linux
    /// (.NET ignores its no-buffering flag there): records evicted from FASTER's memory are then still served
    /// from the kernel's cache while RAM allows. Turn it on when the store is larger than the RAM the kernel
    /// can give to its cache, or to keep FASTER's memory budget the only cache (docs/clients.md has both measured).
    /// </summary>
    public bool DirectIO { get; init; }

    /// <summary>
    /// Open segment files write-through (<c>O_SYNC</c>), so a write's callback means the bytes are on the
    /// device, as with FASTER's own devices. Default: true. Turning it off trades that for speed.
    /// </summary>
    public bool WriteThrough { get; init; } = true;

    /// <summary>
    /// With <see cref="WriteThrough"/>, make each write durable on its own with
    /// <see cref="SpindleRandomAccess.WriteDurableAsync(Microsoft.Win32.SafeHandles.SafeFileHandle, ReadOnlyMemory{byte}, long, IoEngine, CancellationToken)"/>
    /// (<c>RWF_DSYNC</c>: the data and the file size needed to read it back) instead of opening the files
    /// <c>O_SYNC</c> (which also waits for timestamps to reach the device). Default: false.
    /// </summary>
    public bool DataSyncWrites { get; init; }

    /// <summary>Reserve a whole segment's blocks (<c>fallocate</c>, keeping the visible size) when a segment file is created. Default: true.</summary>
    public bool PreallocateFile { get; init; } = true;

    /// <summary>Delete the segment files when the device is disposed or reset. Default: false.</summary>
    public bool DeleteOnClose { get; init; }

    /// <summary>The most bytes the device holds, or <see cref="Devices.CAPACITY_UNSPECIFIED"/>. Default: unspecified.</summary>
    public long Capacity { get; init; } = Devices.CAPACITY_UNSPECIFIED;

    /// <summary>Find the existing segment files at construction, setting the device's start and end segments. Default: false.</summary>
    public bool RecoverDevice { get; init; }

    /// <summary>
    /// The sector size to report to FASTER, or null to use the file system's direct-I/O alignment (at least 512).
    /// Must be a multiple of that alignment for <c>O_DIRECT</c> I/O to succeed.
    /// </summary>
    public uint? SectorSize { get; init; }
}
