namespace Spindle.Workloads.Beyond;

/// <summary>A whole-file copy: <see cref="File.Copy(string, string, bool)"/> against <c>SpindleFile.Copy</c> (copy_file_range).</summary>
public sealed class FileCopy : Workload
{
    private readonly long _fileSize;
    private string _source = "";
    private string _systemIOTarget = "";
    private string _spindleTarget = "";

    /// <summary>Creates the row for a file of <paramref name="fileSize"/> bytes.</summary>
    public FileCopy(long fileSize)
        : base("Beyond", $"FileCopy({Units.Bytes(fileSize)})")
        => _fileSize = fileSize;

    /// <inheritdoc />
    public override IReadOnlyList<Contender> Contenders => Workloads.Contenders.Synchronous;

    /// <inheritdoc />
    public override ReferenceCommand? Reference => new("cp", ["--", _source, _spindleTarget + ".cp"], _fileSize);

    /// <inheritdoc />
    public override void Setup(BenchFiles files)
    {
        _source = files.Source(_fileSize);
        files.EnsureFreeSpace(2 * _fileSize + (64 << 20));
        _systemIOTarget = files.Target(Name + "-systemio");
        _spindleTarget = files.Target(Name + "-spindle");
        files.Adopt(_spindleTarget + ".cp");
    }

    /// <inheritdoc />
    public override ValueTask RunAsync(Contender contender)
    {
        if (contender == Contender.SystemIO)
        {
            File.Copy(_source, _systemIOTarget, overwrite: true);
        }
        else
        {
            SpindleFile.Copy(_source, _spindleTarget, overwrite: true);
        }
        return ValueTask.CompletedTask;
    }
}
