namespace Spindle.Tool.Cli;

/// <summary>Checks of the directories a command is pointed at, as one-line errors.</summary>
public static class Directories
{
    /// <summary>The full path of an existing, writable directory.</summary>
    /// <exception cref="ToolException">It does not exist or cannot be written.</exception>
    public static string Writable(string path, string option)
    {
        string full = Path.GetFullPath(path);
        if (!Directory.Exists(full))
        {
            throw new ToolException($"directory not found: {path} ({option})");
        }
        string probe = Path.Combine(full, ".spindle-probe-" + Environment.ProcessId);
        try
        {
            File.WriteAllBytes(probe, []);
            File.Delete(probe);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new ToolException($"cannot write to {path} ({option}): {e.Message}");
        }
        return full;
    }
}
