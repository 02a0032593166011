using System.Buffers.Binary;
using System.Numerics;

namespace Spindle.Append;

/// <summary>CRC-32C (Castagnoli), the checksum of iSCSI, ext4 metadata and most log formats; hardware-assisted where the CPU has it.</summary>
internal static class Crc32C
{
    /// <summary>Starts a checksum.</summary>
    internal const uint Seed = 0xFFFFFFFF;

    /// <summary>Adds <paramref name="data"/> to a running checksum begun with <see cref="Seed"/>.</summary>
    internal static uint Append(uint crc, ReadOnlySpan<byte> data)
    {
        while (data.Length >= sizeof(ulong))
        {
            crc = BitOperations.Crc32C(crc, BinaryPrimitives.ReadUInt64LittleEndian(data));
            data = data[sizeof(ulong)..];
        }
        foreach (byte value in data)
        {
            crc = BitOperations.Crc32C(crc, value);
        }
        return crc;
    }

    /// <summary>The finished checksum of a running one.</summary>
    internal static uint Finish(uint crc) => ~crc;
}
