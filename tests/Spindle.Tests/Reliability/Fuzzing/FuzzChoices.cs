namespace Spindle.Tests.Reliability.Fuzzing;

/// <summary>The random choices of a program, biased towards the sizes where bugs live: around the 4096-byte buffer and the 512-byte direct-I/O alignment.</summary>
public sealed class FuzzChoices(int seed)
{
    private static readonly int[] InterestingSizes = [0, 1, 2, 511, 512, 513, 1023, 1024, 4095, 4096, 4097, 8191, 8192, 8193, 12288, 16384];

    // Files stay small (well under 100 KiB) so that comparing them after every step is cheap.
    public const int MaxOffset = 40_000;

    public Random Random { get; } = new(seed);

    public bool Chance(int percent) => Random.Next(100) < percent;

    public T Pick<T>(params T[] items) => items[Random.Next(items.Length)];

    public int Size() => Random.Next(4) switch
    {
        0 => Random.Next(0, 12_000),
        1 => Random.Next(0, 600),
        _ => InterestingSizes[Random.Next(InterestingSizes.Length)],
    };

    /// <summary>An offset: aligned, one off an alignment, at or past the end of the file, random, or rarely invalid.</summary>
    public long Offset(long length)
    {
        int roll = Random.Next(100);
        return roll switch
        {
            < 20 => 512L * Random.Next(0, 40),
            < 35 => 4096L * Random.Next(0, 10) + Random.Next(-1, 2),
            < 50 => Math.Max(0, length + Random.Next(-600, 600)),
            < 55 => length,
            < 97 => Random.Next(0, MaxOffset),
            < 98 => -1,
            < 99 => 1L << 50,             // beyond the largest ext4 file: EFBIG
            _ => long.MaxValue - Random.Next(0, 4096),
        };
    }

    public long NewLength() => Random.Next(100) switch
    {
        < 90 => Random.Next(0, 60_000),
        < 93 => 4096L * Random.Next(0, 12),
        < 97 => 0,
        < 98 => -1,
        < 99 => 1L << 50,
        _ => long.MaxValue,
    };

    public byte[] Bytes(int length)
    {
        var bytes = new byte[length];
        Random.NextBytes(bytes);
        return bytes;
    }

    /// <summary>Splits a size into 1 to 5 buffer lengths (empty ones included, as callers do pass them).</summary>
    public int[] Split(int total)
    {
        int count = Random.Next(1, 6);
        var sizes = new int[count];
        int left = total;
        for (int i = 0; i < count - 1; i++)
        {
            sizes[i] = Chance(15) ? 0 : Random.Next(0, left + 1);
            left -= sizes[i];
        }
        sizes[count - 1] = left;
        return sizes;
    }

    public FileMode Mode() => Pick(FileMode.CreateNew, FileMode.Create, FileMode.Open, FileMode.OpenOrCreate, FileMode.Truncate, FileMode.Append,
        FileMode.OpenOrCreate, FileMode.Open, FileMode.Create);

    public FileAccess Access() => Pick(FileAccess.Read, FileAccess.Write, FileAccess.ReadWrite, FileAccess.ReadWrite, FileAccess.ReadWrite);

    public FileShare Share() => Pick(FileShare.None, FileShare.Read, FileShare.Write, FileShare.ReadWrite, FileShare.ReadWrite | FileShare.Delete, FileShare.Read | FileShare.Inheritable);

    public FileOptions Options()
    {
        FileOptions options = FileOptions.None;
        if (Chance(30)) options |= FileOptions.Asynchronous;
        if (Chance(10)) options |= FileOptions.SequentialScan;
        if (Chance(10)) options |= FileOptions.RandomAccess;
        if (Chance(5)) options |= FileOptions.DeleteOnClose;
        if (Chance(1)) options |= FileOptions.WriteThrough; // O_SYNC is slow on a real disk: rare
        return options;
    }

    public long Preallocation() => Random.Next(100) switch
    {
        < 85 => 0,
        < 97 => Random.Next(1, 100_000),
        _ => -1,
    };
}
