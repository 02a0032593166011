namespace Spindle.Workloads;

/// <summary>Finds a program the benchmark compares with or measures through (fio, cp, perf) on a search path.</summary>
public static class ProgramPath
{
    /// <summary>
    /// The full path of <paramref name="program"/> in the first directory of <paramref name="searchPath"/> (colon-separated;
    /// this process's <c>PATH</c> when null) that has it, or null.
    /// </summary>
    public static string? Find(string program, string? searchPath = null) =>
        (searchPath ?? Environment.GetEnvironmentVariable("PATH") ?? "").Split(':', StringSplitOptions.RemoveEmptyEntries)
            .Select(dir => Path.Combine(dir, program)).FirstOrDefault(File.Exists);
}
