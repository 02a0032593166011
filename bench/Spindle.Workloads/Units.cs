using System.Globalization;

namespace Spindle.Workloads;

/// <summary>Sizes and times as people read them: 4 KiB, 1 MiB, 12.3 µs.</summary>
public static class Units
{
    /// <summary>One kibibyte.</summary>
    public const int KiB = 1024;

    /// <summary>One mebibyte.</summary>
    public const int MiB = 1024 * 1024;

    /// <summary>One gibibyte.</summary>
    public const long GiB = 1024L * 1024 * 1024;

    /// <summary>A byte count in the largest binary unit that divides it, else with one decimal.</summary>
    public static string Bytes(long bytes)
    {
        (long unit, string name)[] units = [(GiB, "GiB"), (MiB, "MiB"), (KiB, "KiB")];
        foreach ((long unit, string name) in units)
        {
            if (bytes >= unit)
            {
                return bytes % unit == 0
                    ? string.Create(CultureInfo.InvariantCulture, $"{bytes / unit} {name}")
                    : string.Create(CultureInfo.InvariantCulture, $"{(double)bytes / unit:0.#} {name}");
            }
        }
        return string.Create(CultureInfo.InvariantCulture, $"{bytes} B");
    }

    /// <summary>A duration in nanoseconds with a unit that keeps three or four significant digits.</summary>
    public static string Nanoseconds(double ns) => ns switch
    {
        double.NaN => "n/a",
        < 1_000 => string.Create(CultureInfo.InvariantCulture, $"{ns:0.0} ns"),
        < 1_000_000 => string.Create(CultureInfo.InvariantCulture, $"{ns / 1_000:0.00} µs"),
        < 1_000_000_000 => string.Create(CultureInfo.InvariantCulture, $"{ns / 1_000_000:0.00} ms"),
        _ => string.Create(CultureInfo.InvariantCulture, $"{ns / 1_000_000_000:0.00} s"),
    };

    /// <summary>Parses 4096, 4k, 4KiB, 30MB, 1g (binary multiples).</summary>
    /// <exception cref="FormatException">Not a size.</exception>
    public static long ParseBytes(string text)
    {
        string t = text.Trim().ToLowerInvariant();
        long multiplier = 1;
        string[] suffixes = ["kib", "kb", "k", "mib", "mb", "m", "gib", "gb", "g", "b"];
        foreach (string suffix in suffixes)
        {
            if (t.EndsWith(suffix, StringComparison.Ordinal))
            {
                multiplier = suffix[0] switch { 'k' => KiB, 'm' => MiB, 'g' => GiB, _ => 1 };
                t = t[..^suffix.Length].Trim();
                break;
            }
        }
        if (!long.TryParse(t, NumberStyles.None, CultureInfo.InvariantCulture, out long value) || value <= 0)
        {
            throw new FormatException($"not a size: '{text}' (examples: 4096, 64k, 30MB, 1g)");
        }
        return checked(value * multiplier);
    }
}
