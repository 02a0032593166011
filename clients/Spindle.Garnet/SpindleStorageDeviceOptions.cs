using Tsavorite.core;

namespace Spindle.Garnet;

/// <summary>How a <see cref="SpindleStorageDevice"/> opens and drives its segment files. Defaults in one place.</summary>
public sealed class SpindleStorageDeviceOptions
{
    internal static readonly SpindleStorageDeviceOptions Default = new();

    /// <summary>The engine writes run on (Tsavorite's page flushes, which it does not wait for). Default: <see cref="IoEngine.Auto"/> (io_uring where the kernel allows it).</summary>
    public IoEngine Engine { get; init; } = IoEngine.Auto;

    /// <summary>
    /// The engine reads run on. Default: <see cref="IoEngine.Sync"/>, a read on the thread that asks, its callback
    /// running there before <see cref="SpindleStorageDevice.ReadAsync"/> returns: a Garnet session waits for its read on
    /// that thread anyway (<c>CompletePending(wait: true)</c>), and no other thread has to be free to deliver the
    /// completion. It measured faster than io_uring reads for Garnet, at its default settings and with the pool sized
    /// (docs/clients.md). <see cref="IoEngine.IoUring"/> (or <see cref="IoEngine.Auto"/>: io_uring where the kernel allows
    /// it, else Sync) overlaps the reads of one thread (recovery and scans issue several before they wait); a read's
    /// callback then runs on the thread that takes its completion from the ring — the ring's thread, or a session waiting
    /// for it, which polls in <see cref="SpindleStorageDevice.TryComplete"/> — not on a thread-pool thread.
    /// <see cref="IoEngine.ThreadPool"/> completes on the pool: at Garnet's default settings (a pool of one thread per
    /// core, many connections) its completions wait for a pool thread that every session holds, and reads stall for seconds.
    /// </summary>
    public IoEngine ReadEngine { get; init; } = IoEngine.Sync;

    /// <summary>
    /// Open segment files with <c>O_DIRECT</c>, bypassing the page cache, as Garnet's native device does:
    /// Tsavorite's log memory is then the only cache, and a read of an evicted record reaches the disk.
    /// Where the file system refuses <c>O_DIRECT</c>, files open buffered and
    /// <see cref="SpindleStorageDevice.IsDirectIO"/> is false. Default: true.
    /// </summary>
    public bool DirectIO { get; init; } = true;

    /// <summary>
    /// Open segment files <c>O_DSYNC</c>, so a write's callback means its bytes are on the device. Default: false,
    /// like Garnet's native device (Tsavorite makes a checkpoint durable on its own, and with <c>O_DIRECT</c>
    /// a completed write has left the page cache already).
    /// </summary>
    public bool WriteThrough { get; init; }

    /// <summary>Reserve a whole segment's blocks (<c>fallocate</c>, keeping the visible size) when a segment file is created. Default: false, as Garnet's device factory.</summary>
    public bool PreallocateFile { get; init; }

    /// <summary>Delete the segment files when the device is disposed or reset. Default: false.</summary>
    public bool DeleteOnClose { get; init; }

    /// <summary>The most bytes the device holds (older segments are truncated away), or <see cref="Devices.CAPACITY_UNSPECIFIED"/>. Default: unspecified.</summary>
    public long Capacity { get; init; } = Devices.CAPACITY_UNSPECIFIED;

    /// <summary>Find the existing segment files at construction, setting the device's start and end segments. Default: false.</summary>
    public bool RecoverDevice { get; init; }

    /// <summary>
    /// Operations in flight above which <see cref="SpindleStorageDevice.Throttle"/> asks Tsavorite to wait.
    /// Default: <see cref="SpindleStorageDevice.DefaultThrottleLimit"/>, the limit of Garnet's own local devices.
    /// </summary>
    public int ThrottleLimit { get; init; } = SpindleStorageDevice.DefaultThrottleLimit;
}
