using System.Reflection;

namespace Spindle.Diagnostics;

/// <summary>The library's version as the package states it (the informational version without its source-control suffix).</summary>
internal static class LibraryVersion
{
    internal static readonly string Value = Read();

    private static string Read()
    {
        string? informational = typeof(LibraryVersion).Assembly.GetCustomAttribute<AssemblyInformationalVersionAttribute>()?.InformationalVersion;
        if (string.IsNullOrEmpty(informational))
        {
            return typeof(LibraryVersion).Assembly.GetName().Version?.ToString(3) ?? "0.0.0";
        }
        int plus = informational.IndexOf('+');
        return plus < 0 ? informational : informational[..plus];
    }
}
