namespace Spindle.Tests.Streams;

/// <summary>One way of opening a stream: buffered or not, synchronous or asynchronous, and the engine.</summary>
public sealed record StreamConfiguration(int BufferSize, bool UseAsync, IoEngine Engine)
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

    public FileOptions Options => UseAsync ? FileOptions.Asynchronous : FileOptions.None;

    public SpindleFileStream OpenSpindle(string path, FileMode mode, FileAccess access = FileAccess.ReadWrite, FileShare share = FileShare.Read)
        => new(path, new SpindleFileOptions { Mode = mode, Access = access, Share = share, BufferSize = BufferSize, Options = Options, Engine = Engine });

    public FileStream OpenSystem(string path, FileMode mode, FileAccess access = FileAccess.ReadWrite, FileShare share = FileShare.Read)
        => new(path, mode, access, share, BufferSize, Options);

    public override string ToString() => $"{(BufferSize > 1 ? "buffered" : "unbuffered")}-{(UseAsync ? "async" : "sync")}-{Engine}";
}
