using System.Globalization;
using Microsoft.Win32.SafeHandles;

namespace Spindle.Garnet;

/// <summary>The device's sector size: learned from the file system, and required of every request.</summary>
internal static class SectorAlignment
{
    /// <summary>The smallest sector Tsavorite works with.</summary>
    private const uint MinimumSector = 512;

    /// <summary>
    /// Refuses a request that <c>O_DIRECT</c> could not take: Tsavorite aligns every log and checkpoint I/O to the
    /// device's sector size, so a misaligned one is a caller's mistake, said at once rather than as EINVAL later.
    /// </summary>
    internal static void Check(uint sector, ulong fileOffset, IntPtr memory, uint length)
    {
        ulong mask = sector - 1;
        if (((fileOffset | (ulong)memory | length) & mask) != 0)
        {
            ThrowMisaligned(sector, fileOffset, memory, length);
        }
    }

    /// <summary>The alignment <c>O_DIRECT</c> needs in <paramref name="directory"/>, read from a scratch file there; at least 512 bytes and a power of two.</summary>
    internal static uint Probe(string directory)
    {
        string probe = Path.Combine(directory, $".spindle-device-probe-{Environment.ProcessId}-{Guid.NewGuid():N}");
        using SafeFileHandle handle = SpindleFile.OpenHandle(probe, new SpindleFileOptions
        {
            Mode = FileMode.CreateNew,
            Access = FileAccess.ReadWrite,
            Options = FileOptions.DeleteOnClose,
        });
        DirectIOAlignment alignment = SpindleFile.GetDirectIOAlignment(handle);
        uint needed = (uint)Math.Max(MinimumSector, Math.Max(alignment.MemoryAlignment, alignment.OffsetAlignment));
        return System.Numerics.BitOperations.RoundUpToPowerOf2(needed);
    }

    private static void ThrowMisaligned(uint sector, ulong fileOffset, IntPtr memory, uint length)
    {
        string what = (fileOffset & (sector - 1)) != 0 ? string.Create(CultureInfo.InvariantCulture, $"the device address {fileOffset}")
            : ((ulong)memory & (sector - 1)) != 0 ? string.Create(CultureInfo.InvariantCulture, $"the buffer address 0x{(ulong)memory:X}")
            : string.Create(CultureInfo.InvariantCulture, $"the length {length}");
        throw new ArgumentException(string.Create(CultureInfo.InvariantCulture,
            $"{what} is not a multiple of the device's sector size ({sector} bytes): every address, length and buffer of a {nameof(SpindleStorageDevice)} request must be sector-aligned (Tsavorite's SectorAlignedBufferPool gives such buffers)."));
    }
}
