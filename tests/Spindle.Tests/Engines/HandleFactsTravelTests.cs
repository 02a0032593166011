using Microsoft.Win32.SafeHandles;
using Spindle.Engines;
using Spindle.Engines.FastPath;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Engines;

/// <summary>
/// What Spindle knows about a handle (<see cref="HandleFacts"/>) is learned once and travels with each operation:
/// the public entries look it up once per call, a stream once in its life, and the router and the executors never.
/// A lookup of a handle whose facts were forgotten learns them again and puts them back in the process's table, so a
/// table still without them after the operations shows that none of the operations looked them up.
/// </summary>
public class HandleFactsTravelTests
{
    private const int Rounds = 8;
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    [Theory]
    [MemberData(nameof(EngineCases.All), MemberType = typeof(EngineCases))]
    public async Task The_router_and_the_executors_use_the_facts_they_are_given_and_never_look_them_up(IoEngine kind)
    {
        EngineCases.ReportIoUring(kind);
        FileIoEngine engine = EngineCases.Resolve(kind);
        using var dir = new TempDirectory();
        File.WriteAllBytes(dir.File("f"), new byte[64 << 10]);
        using SafeFileHandle file = File.OpenHandle(dir.File("f"), FileMode.Open, FileAccess.ReadWrite);
        using var fifo = new Fifo(dir.File("pipe"));
        // Learned from the kernel without being kept: any lookup by an engine would put the handle in the table.
        HandleFacts facts = HandleFacts.Probe(file);
        HandleFacts reader = HandleFacts.Probe(fifo.Reader);
        HandleFacts writer = HandleFacts.Probe(fifo.Writer);
        byte[] data = new byte[4096];
        byte[] buffer = new byte[4096];

        for (int round = 0; round < Rounds; round++)
        {
            long offset = round * 4096L;
            data.AsSpan().Fill((byte)(round + 1));
            foreach (bool useFastPath in new[] { true, false })
            {
                await engine.WriteAsync(file, facts, data, offset, useFastPath, CancellationToken.None).AsTask().WaitAsync(Timeout);
                Assert.Equal(4096, await engine.ReadAsync(file, facts, buffer, offset, useFastPath, CancellationToken.None).AsTask().WaitAsync(Timeout));
                Assert.Equal(data, buffer);
                await engine.WriteGatherAsync(file, facts, new ReadOnlyMemory<byte>[] { data[..1024], data[1024..] }, offset, useFastPath, CancellationToken.None).AsTask().WaitAsync(Timeout);
                Assert.Equal(4096, await engine.ReadScatterAsync(file, facts, new Memory<byte>[] { buffer.AsMemory(0, 100), buffer.AsMemory(100) }, offset, useFastPath, CancellationToken.None).AsTask().WaitAsync(Timeout));
            }
            await engine.WriteDurableAsync(file, facts, data, offset, CancellationToken.None).AsTask().WaitAsync(Timeout);
            await engine.FlushDataToDiskAsync(file, facts, CancellationToken.None).AsTask().WaitAsync(Timeout);
            await engine.FlushToDiskAsync(file, facts, CancellationToken.None).AsTask().WaitAsync(Timeout);
            // A pipe: the routes of handles that may wait for ever (a thread of its own, the ring's second lane).
            await engine.WriteAsync(fifo.Writer, writer, data.AsMemory(0, 1), -1, useFastPath: true, CancellationToken.None).AsTask().WaitAsync(Timeout);
            Assert.Equal(1, await engine.ReadAsync(fifo.Reader, reader, buffer.AsMemory(0, 1), -1, useFastPath: true, CancellationToken.None).AsTask().WaitAsync(Timeout));
        }

        Assert.False(HandleFacts.IsKnown(file), "an engine looked up the facts of the file it was given");
        Assert.False(HandleFacts.IsKnown(fifo.Reader), "an engine looked up the facts of the pipe's read end it was given");
        Assert.False(HandleFacts.IsKnown(fifo.Writer), "an engine looked up the facts of the pipe's write end it was given");
    }

    public static TheoryData<IoEngine, bool> StreamCases => new()
    {
        { IoEngine.Sync, false }, { IoEngine.ThreadPool, false }, { IoEngine.IoUring, false },
        { IoEngine.ThreadPool, true }, { IoEngine.IoUring, true },
    };

    [Theory]
    [MemberData(nameof(StreamCases))]
    public async Task A_stream_learns_its_handles_facts_once_and_passes_them_with_every_operation(IoEngine engine, bool direct)
    {
        EngineCases.ReportIoUring(engine);
        using var dir = new TempDirectory();
        var options = new SpindleFileOptions
        {
            Mode = FileMode.Create, Access = FileAccess.ReadWrite, BufferSize = 0, Options = FileOptions.Asynchronous,
            Engine = engine, DirectIO = direct, DirectIOFallback = direct,
        };
        await using var stream = new SpindleFileStream(dir.File("f"), options);
        byte[] data = new byte[8192];
        byte[] buffer = new byte[8192];
        await stream.WriteAsync(data);
        await stream.FlushAsync(); // an O_DIRECT stream's window reaches the engine here
        Assert.True(HandleFacts.IsKnown(stream.SafeFileHandle), "the first asynchronous operation learned the facts");
        HandleFacts.Forget(stream.SafeFileHandle);

        for (int round = 0; round < Rounds; round++)
        {
            data.AsSpan().Fill((byte)(round + 1));
            stream.Position = 0;
            await stream.WriteAsync(data);
            await stream.FlushAsync();
            stream.Position = 0;
            Assert.Equal(data.Length, await stream.ReadAtLeastAsync(buffer, buffer.Length));
            Assert.Equal(data, buffer);
        }

        Assert.False(HandleFacts.IsKnown(stream.SafeFileHandle), "a stream operation looked up the facts its stream already had");
    }

    [Theory]
    [MemberData(nameof(EngineCases.All), MemberType = typeof(EngineCases))]
    public async Task A_raw_handle_is_learned_once_however_many_operations_use_it(IoEngine engine)
    {
        EngineCases.ReportIoUring(engine);
        using var dir = new TempDirectory();
        File.WriteAllBytes(dir.File("f"), new byte[64 << 10]);
        using SafeFileHandle handle = File.OpenHandle(dir.File("f"), FileMode.Open, FileAccess.ReadWrite);
        byte[] buffer = new byte[4096];
        Assert.Equal(4096, await SpindleRandomAccess.ReadAsync(handle, buffer, 0, engine).AsTask().WaitAsync(Timeout));
        HandleFacts facts = HandleFacts.Of(handle);
        int systemCalls = facts.SystemCalls;
        Assert.True(systemCalls > 0, "a handle opened elsewhere is learned from the kernel");

        for (int round = 0; round < Rounds; round++)
        {
            long offset = round * 4096L;
            await SpindleRandomAccess.WriteAsync(handle, buffer, offset, engine).AsTask().WaitAsync(Timeout);
            Assert.Equal(4096, await SpindleRandomAccess.ReadAsync(handle, buffer, offset, engine).AsTask().WaitAsync(Timeout));
            await SpindleRandomAccess.WriteAsync(handle, new ReadOnlyMemory<byte>[] { buffer[..512], buffer[512..] }, offset, engine).AsTask().WaitAsync(Timeout);
            Assert.Equal(4096, await SpindleRandomAccess.ReadAsync(handle, new Memory<byte>[] { buffer }, offset, engine).AsTask().WaitAsync(Timeout));
            await SpindleRandomAccess.WriteDurableAsync(handle, buffer, offset, engine).AsTask().WaitAsync(Timeout);
            await SpindleRandomAccess.FlushDataToDiskAsync(handle, engine).AsTask().WaitAsync(Timeout);
        }

        Assert.Same(facts, HandleFacts.Of(handle));
        Assert.Equal(systemCalls, facts.SystemCalls);
    }

    [Fact]
    public void A_threads_last_lookup_answers_only_for_the_same_handle_and_never_for_a_closed_ones_successor()
    {
        using var dir = new TempDirectory();
        File.WriteAllBytes(dir.File("f"), new byte[4096]);
        using var fifo = new Fifo(dir.File("pipe"));
        using SafeFileHandle file = File.OpenHandle(dir.File("f"), FileMode.Open, FileAccess.ReadWrite);
        HandleFacts fileFacts = HandleFacts.Of(file);
        Assert.Same(fileFacts, HandleFacts.Of(file)); // the thread's last lookup
        Assert.False(fileFacts.MayBlockIndefinitely);

        // Another handle right after: its own facts, not the last ones.
        HandleFacts pipeFacts = HandleFacts.Of(fifo.Reader);
        Assert.NotSame(fileFacts, pipeFacts);
        Assert.True(pipeFacts.MayBlockIndefinitely, "a pipe's facts, not the file's");

        // A closed handle's descriptor number is reused by the next open: the new handle gets facts of its own.
        int number = (int)fifo.Reader.DangerousGetHandle();
        HandleFacts.Of(fifo.Reader); // the pipe is the thread's last lookup when it closes
        fifo.Dispose();
        using SafeFileHandle reopened = File.OpenHandle(dir.File("f"), FileMode.Open, FileAccess.Read);
        HandleFacts reopenedFacts = HandleFacts.Of(reopened);
        Assert.NotSame(pipeFacts, reopenedFacts);
        Assert.False(reopenedFacts.MayBlockIndefinitely, $"the file reopened (descriptor {(int)reopened.DangerousGetHandle()}, was {number}) is not the pipe");

        // Forgotten facts are learned again even by the thread that looked them up last.
        Assert.Same(fileFacts, HandleFacts.Of(file));
        HandleFacts.Forget(file);
        Assert.False(HandleFacts.IsKnown(file));
        Assert.NotSame(fileFacts, HandleFacts.Of(file));
        Assert.True(HandleFacts.IsKnown(file), "the lookup learned the facts again and put them back");
    }
}
