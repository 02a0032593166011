using System.Globalization;
using System.Runtime.InteropServices;

namespace Spindle.Tool.Reports;

/// <summary>What a report says about the machine it ran on, read from /proc and /sys.</summary>
/// <param name="Processors">Logical processors (<c>nproc</c>).</param>
/// <param name="CpuModel">The CPU's model name.</param>
/// <param name="Kernel">The kernel release (<c>uname -r</c>).</param>
/// <param name="MemoryBytes">Total memory.</param>
/// <param name="FileSystem">The file system type and device of the benchmark directory.</param>
/// <param name="Runtime">The .NET runtime.</param>
/// <param name="L1DataCacheBytes">The L1 data cache of CPU 0, or 0 when unknown.</param>
/// <param name="LoadAverage">The 1, 5 and 15 minute load averages when read: other work on a shared machine shows here.</param>
public sealed record MachineInfo(int Processors, string CpuModel, string Kernel, long MemoryBytes, string FileSystem, string Runtime, long L1DataCacheBytes, string LoadAverage)
{
    /// <summary>Reads the facts for a run in <paramref name="directory"/>.</summary>
    public static MachineInfo Read(string directory) => new(
        Environment.ProcessorCount,
        ReadField("/proc/cpuinfo", "model name") ?? RuntimeInformation.ProcessArchitecture.ToString(),
        ReadText("/proc/sys/kernel/osrelease") ?? Environment.OSVersion.VersionString,
        long.TryParse((ReadField("/proc/meminfo", "MemTotal") ?? "").Replace("kB", "", StringComparison.Ordinal).Trim(), out long kib) ? kib * 1024 : 0,
        FileSystemOf(directory),
        RuntimeInformation.FrameworkDescription,
        CacheInfo.L1DataBytes(),
        string.Join(' ', (ReadText("/proc/loadavg") ?? "unknown").Split(' ').Take(3)));

    /// <summary>One line for a report header.</summary>
    public override string ToString() => string.Create(CultureInfo.InvariantCulture,
        $"{Processors} × {CpuModel}, {MemoryBytes / (1024.0 * 1024 * 1024):0.#} GiB RAM, Linux {Kernel}, {Runtime}, files on {FileSystem}, load average {LoadAverage}");

    private static string FileSystemOf(string directory)
    {
        string full = Path.GetFullPath(directory);
        string best = "", type = "unknown", device = "";
        foreach (string line in File.Exists("/proc/self/mounts") ? File.ReadLines("/proc/self/mounts") : [])
        {
            string[] parts = line.Split(' ');
            if (parts.Length < 3)
            {
                continue;
            }
            string mount = parts[1].Replace("\\040", " ", StringComparison.Ordinal);
            bool covers = full == mount || full.StartsWith(mount.TrimEnd('/') + "/", StringComparison.Ordinal) || mount == "/";
            if (covers && mount.Length >= best.Length)
            {
                (best, type, device) = (mount, parts[2], parts[0]);
            }
        }
        return $"{type} ({device} at {best})";
    }

    private static string? ReadText(string path)
    {
        try
        {
            return File.ReadAllText(path).Trim();
        }
        catch (IOException)
        {
            return null;
        }
        catch (UnauthorizedAccessException)
        {
            return null;
        }
    }

    private static string? ReadField(string path, string key)
    {
        string? text = ReadText(path);
        foreach (string line in (text ?? "").Split('\n'))
        {
            int colon = line.IndexOf(':', StringComparison.Ordinal);
            if (colon > 0 && line[..colon].Trim() == key)
            {
                return line[(colon + 1)..].Trim();
            }
        }
        return null;
    }
}

/// <summary>The CPU caches as Linux describes them under /sys/devices/system/cpu/cpu0/cache.</summary>
public static class CacheInfo
{
    /// <summary>The size of CPU 0's level-1 data cache in bytes, or 0 when the system does not say.</summary>
    public static long L1DataBytes(string root = "/sys/devices/system/cpu/cpu0/cache")
    {
        if (!Directory.Exists(root))
        {
            return 0;
        }
        foreach (string index in Directory.EnumerateDirectories(root, "index*"))
        {
            string level = Read(Path.Combine(index, "level"));
            string type = Read(Path.Combine(index, "type"));
            if (level == "1" && type == "Data")
            {
                return ParseSize(Read(Path.Combine(index, "size")));
            }
        }
        return 0;
    }

    /// <summary>Parses sysfs cache sizes such as <c>48K</c> or <c>1M</c>.</summary>
    public static long ParseSize(string text)
    {
        text = text.Trim();
        long multiplier = text.EndsWith('K') ? 1024 : text.EndsWith('M') ? 1024 * 1024 : 1;
        string digits = multiplier == 1 ? text : text[..^1];
        return long.TryParse(digits, NumberStyles.None, CultureInfo.InvariantCulture, out long value) ? value * multiplier : 0;
    }

    private static string Read(string path)
    {
        try
        {
            return File.ReadAllText(path).Trim();
        }
        catch (IOException)
        {
            return "";
        }
    }
}
