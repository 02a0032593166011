using System.Collections.Concurrent;
using System.Globalization;
using Microsoft.Win32.SafeHandles;

namespace Spindle.Clients.Devices;

/// <summary>A device's sector size: learned from the file system once per directory, and checked on every request.</summary>
internal static class SectorSizes
{
    /// <summary>The smallest sector FASTER and Tsavorite work with.</summary>
    private const uint MinimumSector = 512;

    // FASTER and Tsavorite create a device per commit record and per checkpoint file, so the probe (a scratch file
    // created and deleted) runs once per directory instead of costing two metadata updates per commit.
    private static readonly ConcurrentDictionary<string, uint> s_byDirectory = new();

    /// <summary>
    /// The sector size of a device whose segment files are <c><paramref name="filename"/>.N</c>: <paramref name="requested"/>
    /// when given, else the file system's direct-I/O alignment there. Creates their directory if missing.
    /// </summary>
    /// <exception cref="ArgumentException"><paramref name="filename"/> is null or empty.</exception>
    internal static uint ForSegmentsOf(string filename, uint? requested = null)
    {
        ArgumentException.ThrowIfNullOrEmpty(filename);
        string directory = Path.GetDirectoryName(Path.GetFullPath(filename))!;
        Directory.CreateDirectory(directory);
        return requested ?? s_byDirectory.GetOrAdd(directory, Probe);
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

    /// <summary>Whether a request meets <c>O_DIRECT</c>'s alignment: its file offset, buffer address and length are multiples of <paramref name="sector"/>.</summary>
    internal static bool IsAligned(uint sector, ulong fileOffset, IntPtr memory, uint length)
        => ((fileOffset | (ulong)memory | length) & (sector - 1)) == 0;

    /// <summary>
    /// Refuses a request that <c>O_DIRECT</c> could not take, naming what is misaligned: a device whose caller aligns
    /// every I/O to its sector size says a misaligned one is a caller's mistake at once, rather than as EINVAL later.
    /// </summary>
    /// <exception cref="ArgumentException">The offset, buffer or length is not a multiple of <paramref name="sector"/>.</exception>
    internal static void Check(uint sector, ulong fileOffset, IntPtr memory, uint length, string deviceName)
    {
        if (!IsAligned(sector, fileOffset, memory, length))
        {
            ThrowMisaligned(sector, fileOffset, memory, length, deviceName);
        }
    }

    private static void ThrowMisaligned(uint sector, ulong fileOffset, IntPtr memory, uint length, string deviceName)
    {
        string what = (fileOffset & (sector - 1)) != 0 ? string.Create(CultureInfo.InvariantCulture, $"the device address {fileOffset}")
            : ((ulong)memory & (sector - 1)) != 0 ? string.Create(CultureInfo.InvariantCulture, $"the buffer address 0x{(ulong)memory:X}")
            : string.Create(CultureInfo.InvariantCulture, $"the length {length}");
        throw new ArgumentException(string.Create(CultureInfo.InvariantCulture,
            $"{what} is not a multiple of the device's sector size ({sector} bytes): every address, length and buffer of a {deviceName} request must be sector-aligned (a SectorAlignedBufferPool gives such buffers)."));
    }
}
