namespace Spindle.Clients.Probe;

/// <summary>
/// The log entries the FasterLog tests and the probe write: entry <c>i</c> is a pure function of
/// <c>i</c> (1 to 1,500 bytes), so a test can check what a killed child wrote without talking to it.
/// </summary>
public static class LogEntries
{
    /// <summary>The longest entry.</summary>
    public const int MaxLength = 1500;

    /// <summary>Entry <paramref name="index"/>.</summary>
    public static byte[] Create(long index)
    {
        ulong mixed = Mix((ulong)index);
        var entry = new byte[1 + (int)(mixed % MaxLength)];
        for (int k = 0; k < entry.Length; k++)
        {
            entry[k] = (byte)(mixed >> (8 * (k & 7)) ^ (ulong)k);
        }
        return entry;
    }

    private static ulong Mix(ulong x)
    {
        // splitmix64: every index gets an unrelated length and pattern.
        x += 0x9E3779B97F4A7C15UL;
        x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9UL;
        x = (x ^ (x >> 27)) * 0x94D049BB133111EBUL;
        return x ^ (x >> 31);
    }
}
