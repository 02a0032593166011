namespace Spindle.Tests.Infrastructure;

/// <summary>
/// A directory under the temp area that is removed when disposed. Shared with the clients' test projects, which link
/// this file (as <c>TestDirectory</c>).
/// </summary>
public sealed class TempDirectory : IDisposable
{
    public TempDirectory(string? parent = null)
    {
        Path = System.IO.Path.Combine(parent ?? System.IO.Path.GetTempPath(), "spindle-tests-" + Guid.NewGuid().ToString("N"));
        Directory.CreateDirectory(Path);
    }

    public string Path { get; }

    public string File(string name) => System.IO.Path.Combine(Path, name);

    /// <summary>Creates a subdirectory and returns its path.</summary>
    public string Sub(string name) => Directory.CreateDirectory(System.IO.Path.Combine(Path, name)).FullName;

    public void Dispose()
    {
        try
        {
            Directory.Delete(Path, recursive: true);
        }
        catch (DirectoryNotFoundException)
        {
        }
    }
}
