namespace Spindle.Engines.IoUring;

/// <summary>
/// <c>fdatasync</c> and durable writes on the ring (router rows 11 and 12): no pool thread waits for the device. A durable
/// write is one <c>IORING_OP_WRITE</c> with <c>RWF_DSYNC</c>; the first one the kernel refuses (<c>EINVAL</c>,
/// <c>EOPNOTSUPP</c> before any byte) switches the engine to a write linked to an <c>fdatasync</c> in one submission.
/// </summary>
internal sealed partial class IoUringEngine
{
    private volatile bool _dataSyncWritesRefused; // the kernel refused RWF_DSYNC on the ring once: linked pairs from then on

    /// <summary>
    /// Whether durable writes go as a write linked to an <c>fdatasync</c> rather than one <c>RWF_DSYNC</c> write: set
    /// when the kernel refused the flag once; tests set it on a private engine to run the linked path.
    /// </summary>
    internal bool DataSyncWritesRefused
    {
        get => _dataSyncWritesRefused;
        set => _dataSyncWritesRefused = value;
    }

    internal void RefuseDataSyncWrites() => _dataSyncWritesRefused = true;
}
