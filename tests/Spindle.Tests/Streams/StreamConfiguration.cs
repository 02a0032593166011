namespace Spindle.Tests.Streams;

/// <summary>One way of opening a stream: buffered or not, synchronous or asynchronous, and the engine.</summary>
public sealed record StreamConfiguration(int BufferSize, bool UseAsync, IoEngine Engine, bool DirectIO = false)
{
    /// <summary>Unbuffered/buffered × sync/async opening × every engine.</summary>
    public static TheoryData<StreamConfiguration> All()
    {
        var data = new TheoryData<StreamConfiguration>();
        foreach (IoEngine engine in Enum.GetValues<IoEngine>())
        {
            foreach (int bufferSize in new[] { 0, 4096 })
            {
                foreach (bool useAsync in new[] { false, true })
                {
                    data.Add(new StreamConfiguration(bufferSize, useAsync, engine));
                }
            }
        }
        return data;
    }

    /// <summary>
    /// <see cref="All"/> plus buffered streams over <c>O_DIRECT</c> handles on every engine: the
    /// stream's aligned layer must make them indistinguishable from FileStream for any sizes and offsets.
    /// </summary>
    public static TheoryData<StreamConfiguration> AllWithDirectIO()
    {
        TheoryData<StreamConfiguration> data = All();
        if (Portable.PassThrough.Enabled)
        {
            return data; // System.IO has no O_DIRECT to pass through to (DirectIO throws PlatformNotSupportedException)
        }
        foreach (IoEngine engine in Enum.GetValues<IoEngine>())
        {
            foreach (bool useAsync in new[] { false, true })
            {
                data.Add(new StreamConfiguration(4096, useAsync, engine, DirectIO: true));
            }
        }
        return data;
    }

    public FileOptions Options => UseAsync ? FileOptions.Asynchronous : FileOptions.None;

    public SpindleFileStream OpenSpindle(string path, FileMode mode, FileAccess access = FileAccess.ReadWrite, FileShare share = FileShare.Read)
    {
        var stream = new SpindleFileStream(path, new SpindleFileOptions { Mode = mode, Access = access, Share = share, BufferSize = BufferSize, Options = Options, Engine = Engine, DirectIO = DirectIO });
        // The direct configurations must really run over O_DIRECT, not a quiet fallback.
        Assert.Equal(DirectIO, SpindleFile.IsDirectIO(stream.SafeFileHandle));
        return stream;
    }

    public FileStream OpenSystem(string path, FileMode mode, FileAccess access = FileAccess.ReadWrite, FileShare share = FileShare.Read)
        => new(path, mode, access, share, BufferSize, Options);

    public override string ToString() => $"{(DirectIO ? "direct-" : "")}{(BufferSize > 1 ? "buffered" : "unbuffered")}-{(UseAsync ? "async" : "sync")}-{Engine}";
}
