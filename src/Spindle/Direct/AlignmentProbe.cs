using System.Numerics;
using Microsoft.Win32.SafeHandles;
using Spindle.Interop;

namespace Spindle.Direct;

/// <summary>
/// Finds the alignment O_DIRECT needs on a file: <c>statx(STATX_DIOALIGN)</c> where the kernel and
/// file system report it (Linux 6.1+), else the device's logical block size (<c>BLKSSZGET</c> on a
/// block device, sysfs for a file on one), else the file system's block size.
/// </summary>
internal static unsafe class AlignmentProbe
{
    private const uint BLKSSZGET = 0x1268;

    internal static DirectIOAlignment For(SafeFileHandle fd, string? path)
    {
        StatxBuffer status;
        if (Libc.Statx(fd, string.Empty, LinuxConstants.AT_EMPTY_PATH, LinuxConstants.STATX_DIOALIGN | LinuxConstants.STATX_TYPE, &status) != 0)
        {
            throw IoErrors.ForErrno(Errno.Last, path);
        }
        if ((status.Mask & LinuxConstants.STATX_DIOALIGN) != 0 && IsUsable((int)status.DioMemAlign) && IsUsable((int)status.DioOffsetAlign))
        {
            return new DirectIOAlignment((int)status.DioMemAlign, (int)status.DioOffsetAlign);
        }

        int blockSize = LogicalBlockSize(fd, status);
        if (!IsUsable(blockSize))
        {
            blockSize = IsUsable((int)status.BlockSize) ? (int)status.BlockSize : Environment.SystemPageSize;
        }
        // Without the kernel's word on memory, the block size is the safe requirement for addresses too.
        return new DirectIOAlignment(blockSize, blockSize);
    }

    private static int LogicalBlockSize(SafeFileHandle fd, in StatxBuffer status)
    {
        if ((status.Mode & LinuxConstants.S_IFMT) == 0x6000 /* S_IFBLK */)
        {
            int size;
            return Libc.IoctlInt(fd, BLKSSZGET, &size) == 0 ? size : 0;
        }
        if (status.DeviceMajor == 0)
        {
            return 0; // an anonymous device (tmpfs, overlay, FUSE): no queue to ask
        }
        // /sys/dev/block/M:m is the disk or one of its partitions; a partition's queue is its parent's.
        string device = $"/sys/dev/block/{status.DeviceMajor}:{status.DeviceMinor}";
        return ReadNumber(Path.Combine(device, "queue/logical_block_size")) is int own and > 0
            ? own
            : ReadNumber(Path.Combine(device, "../queue/logical_block_size")) ?? 0;
    }

    private static int? ReadNumber(string path)
    {
        try
        {
            return int.TryParse(File.ReadAllText(path).Trim(), out int value) ? value : null;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }

    private static bool IsUsable(int size) => size > 0 && BitOperations.IsPow2(size);
}
