namespace Spindle.Workloads.Files;

/// <summary>
/// <c>File</c>'s content methods against their <c>SpindleFile</c> twins: many small files read or written with a
/// fixed number in flight, or one small file read again and again. The files stay in the page cache (a cold
/// cache needs the caches dropped between rounds, which the clients bench does outside its clock).
/// </summary>
public sealed class FilesContent : Workload
{
    /// <summary>What a row does.</summary>
    public enum Kind
    {
        /// <summary>ReadAllBytesAsync of every file, <see cref="InFlight"/> at a time.</summary>
        ReadMany,

        /// <summary>ReadAllBytesAsync of one file, one call at a time.</summary>
        ReadOne,

        /// <summary>WriteAllBytesAsync of every file, <see cref="InFlight"/> at a time.</summary>
        WriteMany,
    }

    /// <summary>How many calls run at once in the many-files rows.</summary>
    public const int InFlight = 64;

    private const int FileSize = 4096;

    private readonly Kind _kind;
    private readonly int _count;
    private readonly byte[] _contents = new byte[FileSize];
    private string[] _paths = [];
    private string? _directory; // the row's own directory of files, removed on dispose

    /// <summary>Creates a row over <paramref name="count"/> files (one for <see cref="Kind.ReadOne"/>, read <paramref name="count"/> times).</summary>
    public FilesContent(Kind kind, int count)
        : base("Files", kind switch
        {
            Kind.ReadMany => $"Files.ReadAllBytesAsync({count:N0} × 4 KiB, {InFlight} in flight, warm)",
            Kind.ReadOne => "Files.ReadAllBytesAsync(one 4 KiB file, 1 in flight)",
            _ => $"Files.WriteAllBytesAsync({count:N0} × 4 KiB, {InFlight} in flight)",
        })
    {
        _kind = kind;
        _count = count;
    }

    /// <inheritdoc />
    public override IReadOnlyList<Contender> Contenders => Workloads.Contenders.Synchronous;

    /// <inheritdoc />
    public override int OperationsPerInvocation => _count;

    /// <inheritdoc />
    public override long CallsPerInvocation => _count;

    /// <inheritdoc />
    public override void Setup(BenchFiles files)
    {
        Random.Shared.NextBytes(_contents);
        string directory = files.Target(Name.Replace(' ', '_').Replace('×', 'x'));
        Directory.CreateDirectory(directory);
        _directory = directory;
        int distinct = _kind == Kind.ReadOne ? 1 : _count;
        _paths = Enumerable.Range(0, distinct).Select(i => Path.Combine(directory, $"f{i}")).ToArray();
        foreach (string path in _paths)
        {
            File.WriteAllBytes(path, _contents);
        }
    }

    /// <inheritdoc />
    protected override void Dispose(bool disposing)
    {
        if (_directory is not null && Directory.Exists(_directory))
        {
            Directory.Delete(_directory, recursive: true);
        }
        _directory = null;
    }

    /// <inheritdoc />
    public override async ValueTask RunAsync(Contender contender)
    {
        bool spindle = contender != Contender.SystemIO;
        switch (_kind)
        {
            case Kind.ReadOne:
                string path = _paths[0];
                for (int i = 0; i < _count; i++)
                {
                    _ = spindle ? await SpindleFile.ReadAllBytesAsync(path).ConfigureAwait(false) : await File.ReadAllBytesAsync(path).ConfigureAwait(false);
                }
                break;
            case Kind.ReadMany:
                await Parallel.ForEachAsync(_paths, new ParallelOptions { MaxDegreeOfParallelism = InFlight }, async (p, token) =>
                {
                    _ = spindle ? await SpindleFile.ReadAllBytesAsync(p, token).ConfigureAwait(false) : await File.ReadAllBytesAsync(p, token).ConfigureAwait(false);
                }).ConfigureAwait(false);
                break;
            default:
                byte[] contents = _contents;
                await Parallel.ForEachAsync(_paths, new ParallelOptions { MaxDegreeOfParallelism = InFlight }, async (p, token) =>
                {
                    if (spindle)
                    {
                        await SpindleFile.WriteAllBytesAsync(p, contents, token).ConfigureAwait(false);
                    }
                    else
                    {
                        await File.WriteAllBytesAsync(p, contents, token).ConfigureAwait(false);
                    }
                }).ConfigureAwait(false);
                break;
        }
    }
}
