using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Engines.FastPath;
using Spindle.Interop;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Streams;

/// <summary>
/// How many operations reach the kernel, counted by Spindle's meter: none for <c>Seek</c> and
/// <c>Position</c>, one per unbuffered read or write, one per buffer refill.
/// </summary>
[Collection(StreamMetricsCollection.Name)]
public class StreamSystemCallTests
{
    private static long Operations => SpindleTotals.Snapshot().Operations;

    private static SpindleFileStream Open(string path, int bufferSize, bool useAsync, IoEngine engine = IoEngine.Sync)
        => new(path, new SpindleFileOptions
        {
            Mode = FileMode.OpenOrCreate,
            Access = FileAccess.ReadWrite,
            BufferSize = bufferSize,
            Options = useAsync ? FileOptions.Asynchronous : FileOptions.None,
            Engine = engine,
        });

    [Theory]
    [InlineData(0, false)]
    [InlineData(0, true)]
    [InlineData(4096, false)]
    [InlineData(4096, true)]
    public void Seek_and_Position_make_no_system_call(int bufferSize, bool useAsync)
    {
        using var dir = new TempDirectory();
        File.WriteAllBytes(dir.File("f"), new byte[10_000]);
        using var stream = Open(dir.File("f"), bufferSize, useAsync);
        SafeFileHandle handle = stream.SafeFileHandle;
        long before = Operations;
        for (int i = 0; i < 10_000; i++)
        {
            stream.Seek(i + 1, SeekOrigin.Begin);
            stream.Seek(-1, SeekOrigin.Current);
            stream.Position = i + 1;
            Assert.Equal(i + 1, stream.Position);
        }
        Assert.Equal(before, Operations);
        // The descriptor's own offset never moved: the position lives only in the stream.
        Assert.Equal(0, Libc.LSeek(handle, 0, LinuxConstants.SEEK_CUR));
        Assert.Equal(10_000, stream.Position);
    }

    public static TheoryData<bool, IoEngine> EveryWay()
    {
        var data = new TheoryData<bool, IoEngine>();
        foreach (IoEngine engine in Enum.GetValues<IoEngine>())
        {
            data.Add(false, engine);
            data.Add(true, engine);
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(EveryWay))]
    public async Task An_unbuffered_read_or_write_is_one_operation(bool useAsync, IoEngine engine)
    {
        using var dir = new TempDirectory();
        File.WriteAllBytes(dir.File("f"), new byte[100_000]);
        await using var stream = Open(dir.File("f"), bufferSize: 0, useAsync, engine);
        byte[] buffer = new byte[3000];
        foreach (Func<Task> call in new Func<Task>[]
        {
            () => Task.FromResult(stream.Read(buffer)),
            () => Task.FromResult(stream.Read(buffer, 0, 10)),
            () => stream.ReadAsync(buffer).AsTask(),
            () => stream.ReadAsync(buffer, 1, 7),
            () => Task.FromResult(stream.ReadByte()),
            () => { stream.Write(buffer); return Task.CompletedTask; },
            () => stream.WriteAsync(buffer).AsTask(),
            () => { stream.WriteByte(1); return Task.CompletedTask; },
        })
        {
            long before = Operations;
            await call();
            Assert.Equal(before + 1, Operations);
        }
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_buffered_stream_refills_and_flushes_with_one_operation(bool useAsync)
    {
        using var dir = new TempDirectory();
        File.WriteAllBytes(dir.File("f"), new byte[100_000]);
        await using var stream = Open(dir.File("f"), bufferSize: 4096, useAsync);
        byte[] buffer = new byte[100];

        long before = Operations;
        Assert.Equal(100, await stream.ReadAsync(buffer));
        Assert.Equal(before + 1, Operations); // one refill of 4096 bytes
        for (int i = 0; i < 39; i++)
        {
            Assert.Equal(100, i % 2 == 0 ? await stream.ReadAsync(buffer) : stream.Read(buffer));
        }
        Assert.Equal(before + 1, Operations); // served from the buffer
        Assert.Equal(4000, stream.Position);

        stream.Position = 50_000;
        before = Operations;
        for (int i = 0; i < 40; i++)
        {
            if (i % 2 == 0)
            {
                await stream.WriteAsync(buffer);
            }
            else
            {
                stream.Write(buffer);
            }
        }
        Assert.Equal(before, Operations); // all in the buffer
        Assert.Equal(50_000 + 4000, stream.Position);
        await stream.FlushAsync();
        Assert.Equal(before + 1, Operations);

        // A request as large as the buffer bypasses it: one operation, straight into the caller's memory.
        byte[] large = new byte[4096];
        before = Operations;
        Assert.Equal(4096, await stream.ReadAsync(large));
        stream.Write(large);
        Assert.Equal(before + 2, Operations);
    }

    // Opening a file learns its flags, often its type (the directory check of a read-only open, a truncation)
    // and file system (the lock decision, or a reader's device); the engines' facts need nothing more, so a
    // stream's first asynchronous operation asks the kernel only what its open did not learn. A regular file
    // opened elsewhere costs three calls on a local file system: fcntl(F_GETFL), statx(STATX_TYPE), fstatfs.
    [Theory]
    [InlineData(FileMode.Open, FileAccess.Read, FileShare.Read, FileOptions.None, 0, 3)]
    [InlineData(FileMode.Create, FileAccess.Write, FileShare.Read, FileOptions.None, 0, 3)]
    [InlineData(FileMode.Truncate, FileAccess.ReadWrite, FileShare.ReadWrite, FileOptions.None, 0, 3)]
    [InlineData(FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.Read, FileOptions.None, 1, 3)]
    [InlineData(FileMode.Create, FileAccess.ReadWrite, FileShare.None, FileOptions.None, 1, 3)]
    [InlineData(FileMode.Create, FileAccess.Write, FileShare.Read, FileOptions.WriteThrough, 0, 3)]
    public async Task A_streams_first_async_operation_asks_the_kernel_only_what_its_open_did_not_learn(
        FileMode mode, FileAccess access, FileShare share, FileOptions options, int expectedCalls, int probeCalls)
    {
        foreach (bool useAsync in new[] { false, true })
        {
            using var dir = new TempDirectory();
            File.WriteAllBytes(dir.File("f"), new byte[10_000]);
            var streamOptions = new SpindleFileOptions
            {
                Mode = mode, Access = access, Share = share, BufferSize = 0,
                Options = options | (useAsync ? FileOptions.Asynchronous : FileOptions.None),
            };
            await using var stream = new SpindleFileStream(dir.File("f"), streamOptions);
            if ((access & FileAccess.Write) == 0)
            {
                Assert.Equal(100, await stream.ReadAsync(new byte[100]));
            }
            else
            {
                await stream.WriteAsync(new byte[100]);
            }

            HandleFacts facts = HandleFacts.Of(stream.SafeFileHandle);   // those the first operation used
            HandleFacts probed = HandleFacts.Probe(stream.SafeFileHandle); // asked of the kernel alone
            Assert.Equal(expectedCalls, facts.SystemCalls);
            Assert.Equal(probeCalls, probed.SystemCalls);
            Assert.Equal(
                (probed.NonBlockingReads, probed.CachedWrites, probed.CharacterDevice, probed.MayBlockIndefinitely),
                (facts.NonBlockingReads, facts.CachedWrites, facts.CharacterDevice, facts.MayBlockIndefinitely));
            Assert.True(facts.NonBlockingReads);
        }
    }
}
