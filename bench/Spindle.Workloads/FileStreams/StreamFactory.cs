namespace Spindle.Workloads.FileStreams;

/// <summary>
/// Opens the same file the same way as <see cref="FileStream"/> or as <see cref="SpindleFileStream"/>;
/// the option objects are built once per contender so an invocation allocates only what the stream does.
/// </summary>
internal sealed class StreamFactory
{
    private readonly FileStreamOptions _systemIO;
    private readonly Dictionary<Contender, SpindleFileOptions> _spindle = new();

    public StreamFactory(FileMode mode, FileAccess access, FileShare share, FileOptions options, int bufferSize, long preallocationSize = 0)
    {
        _systemIO = new FileStreamOptions
        {
            Mode = mode, Access = access, Share = share, Options = options, BufferSize = bufferSize, PreallocationSize = preallocationSize,
        };
        foreach (Contender contender in Contenders.SpindleColumns)
        {
            _spindle[contender] = new SpindleFileOptions
            {
                Mode = mode, Access = access, Share = share, Options = options, BufferSize = bufferSize,
                PreallocationSize = preallocationSize, Engine = contender.Engine(),
            };
        }
    }

    public Stream Open(string path, Contender contender) => contender == Contender.SystemIO
        ? new FileStream(path, _systemIO)
        : new SpindleFileStream(path, _spindle[contender]);
}
