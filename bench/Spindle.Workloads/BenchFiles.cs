namespace Spindle.Workloads;

/// <summary>
/// The files of a benchmark run in one directory: source files of a given size are created once and
/// shared by every row that reads them; everything created here is deleted on <see cref="Dispose"/>.
/// </summary>
public sealed class BenchFiles : IDisposable
{
    private readonly Dictionary<string, string> _sources = new();   // source-file key -> path
    private readonly List<string> _created = new();                  // every path handed out, deleted on dispose
    private readonly string _prefix = "spindle-bench-" + Environment.ProcessId + "-";

    /// <summary>Uses <paramref name="directory"/>, which must exist.</summary>
    /// <exception cref="DirectoryNotFoundException">The directory does not exist.</exception>
    public BenchFiles(string directory)
    {
        if (!System.IO.Directory.Exists(directory))
        {
            throw new DirectoryNotFoundException($"directory not found: {directory}");
        }
        Directory = Path.GetFullPath(directory);
    }

    /// <summary>Where the files go.</summary>
    public string Directory { get; }

    /// <summary>Every path handed out so far (for cleanup after a crash or Ctrl-C).</summary>
    public IReadOnlyList<string> Created => _created;

    /// <summary>
    /// A file of <paramref name="size"/> bytes of pseudo-random data, created on first request and shared after.
    /// </summary>
    /// <exception cref="IOException">The directory has not enough free space.</exception>
    public string Source(long size)
    {
        string key = "src-" + size;
        lock (_sources)
        {
            if (_sources.TryGetValue(key, out string? existing))
            {
                return existing;
            }
            string path = NewPath(key);
            Fill(path, size);
            _sources[key] = path;
            return path;
        }
    }

    /// <summary>A fresh path for a file a row writes; the row creates it.</summary>
    public string Target(string name)
    {
        lock (_sources)
        {
            return NewPath("dst-" + name);
        }
    }

    /// <summary>Registers a path that something else creates (a reference command's output) for deletion.</summary>
    public void Adopt(string path)
    {
        lock (_sources)
        {
            _created.Add(path);
        }
    }

    /// <summary>Throws a one-line <see cref="IOException"/> when fewer than <paramref name="bytes"/> are free in the directory.</summary>
    public void EnsureFreeSpace(long bytes)
    {
        long free = new DriveInfo(Directory).AvailableFreeSpace;
        if (free < bytes)
        {
            throw new IOException($"no space: {Directory} has {Units.Bytes(free)} free, the benchmark needs {Units.Bytes(bytes)}");
        }
    }

    /// <summary>Deletes every file handed out.</summary>
    public void Dispose()
    {
        lock (_sources)
        {
            foreach (string path in _created)
            {
                try
                {
                    File.Delete(path);
                }
                catch (IOException)
                {
                    // A file still open elsewhere: the directory's owner sees it by its prefix.
                }
                catch (UnauthorizedAccessException)
                {
                }
            }
            _created.Clear();
            _sources.Clear();
        }
    }

    private string NewPath(string name)
    {
        string path = Path.Combine(Directory, _prefix + name + "-" + _created.Count + ".dat");
        _created.Add(path);
        return path;
    }

    private void Fill(string path, long size)
    {
        EnsureFreeSpace(size + (64 << 20));
        byte[] chunk = new byte[Math.Min(size, 1 << 20)];
        new Random(size.GetHashCode()).NextBytes(chunk);
        using FileStream stream = new(path, FileMode.Create, FileAccess.Write, FileShare.Read, bufferSize: 0);
        for (long written = 0; written < size; written += chunk.Length)
        {
            stream.Write(chunk, 0, (int)Math.Min(chunk.Length, size - written));
        }
    }
}
