using Spindle.Interop;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Streams;

/// <summary>
/// <c>Length</c> against FileStream's after the stream's own writes, <c>SetLength</c>, append mode, and
/// writes by others. FileStream on Linux asks the kernel (<c>fstat</c>) on every call, even when the
/// share mode forbids other writers, because the <c>flock</c> behind <see cref="FileShare"/> is advisory:
/// a writer that takes no lock still changes the file, and both streams must see it.
/// </summary>
public class StreamLengthTests
{
    public static TheoryData<StreamConfiguration> Configurations => StreamConfiguration.AllWithDirectIO();

    /// <summary>The same writes, seeks and truncations on both streams; records every Length seen.</summary>
    private static async Task<List<long>> ExerciseAsync(Stream stream, bool useAsync)
    {
        var lengths = new List<long> { stream.Length };
        byte[] data = new byte[6000];
        new Random(7).NextBytes(data);
        async Task WriteAsync(int offset, int count)
        {
            if (useAsync)
            {
                await stream.WriteAsync(data.AsMemory(offset, count));
            }
            else
            {
                stream.Write(data, offset, count);
            }
            lengths.Add(stream.Length);
        }

        await WriteAsync(0, 100);
        stream.WriteByte(42);
        lengths.Add(stream.Length);
        await WriteAsync(100, 5000);
        stream.Seek(10_000, SeekOrigin.Begin);
        lengths.Add(stream.Length); // seeking past the end does not grow the file
        await WriteAsync(0, 10);
        stream.SetLength(3);
        lengths.Add(stream.Length);
        lengths.Add(stream.Position);
        stream.SetLength(9000);
        lengths.Add(stream.Length);
        stream.Seek(-1, SeekOrigin.End);
        await WriteAsync(0, 4097);
        stream.Position = 1;
        await WriteAsync(200, 3);
        stream.Flush();
        lengths.Add(stream.Length);
        lengths.Add(stream.Position);
        return lengths;
    }

    [Theory]
    [MemberData(nameof(Configurations))]
    public async Task Length_follows_writes_and_SetLength_as_in_FileStream(StreamConfiguration configuration)
    {
        using var dir = new TempDirectory();
        List<long> expected, actual;
        await using (FileStream system = configuration.OpenSystem(dir.File("system"), FileMode.Create))
        {
            expected = await ExerciseAsync(system, configuration.UseAsync);
        }
        await using (SpindleFileStream spindle = configuration.OpenSpindle(dir.File("spindle"), FileMode.Create))
        {
            actual = await ExerciseAsync(spindle, configuration.UseAsync);
        }
        Assert.Equal(expected, actual);
        Assert.Equal(File.ReadAllBytes(dir.File("system")), File.ReadAllBytes(dir.File("spindle")));
    }

    [Theory]
    [MemberData(nameof(Configurations))]
    public async Task Length_in_append_mode_is_as_in_FileStream(StreamConfiguration configuration)
    {
        if (configuration.DirectIO)
        {
            return; // FileMode.Append over O_DIRECT is covered by the direct-I/O suites
        }
        using var dir = new TempDirectory();
        byte[] initial = new byte[1234];
        new Random(3).NextBytes(initial);
        File.WriteAllBytes(dir.File("system"), initial);
        File.WriteAllBytes(dir.File("spindle"), initial);

        async Task<List<long>> RunAsync(Stream stream)
        {
            var lengths = new List<long> { stream.Length, stream.Position };
            byte[] data = new byte[5000];
            for (int i = 0; i < 3; i++)
            {
                if (configuration.UseAsync)
                {
                    await stream.WriteAsync(data.AsMemory(0, 1000 * (i + 1)));
                }
                else
                {
                    stream.Write(data, 0, 1000 * (i + 1));
                }
                lengths.Add(stream.Length);
            }
            stream.SetLength(20_000);
            lengths.Add(stream.Length);
            stream.Flush();
            lengths.Add(stream.Length);
            return lengths;
        }

        List<long> expected, actual;
        await using (FileStream system = configuration.OpenSystem(dir.File("system"), FileMode.Append, FileAccess.Write))
        {
            expected = await RunAsync(system);
        }
        await using (SpindleFileStream spindle = configuration.OpenSpindle(dir.File("spindle"), FileMode.Append, FileAccess.Write))
        {
            actual = await RunAsync(spindle);
        }
        Assert.Equal(expected, actual);
        Assert.Equal(File.ReadAllBytes(dir.File("system")), File.ReadAllBytes(dir.File("spindle")));
    }

    /// <summary>Appends through a descriptor of its own that takes no flock, as another process may.</summary>
    private static unsafe void GrowWithoutLock(string path, int count)
    {
        int fd = Libc.Open(path, OpenFlags.O_WRONLY | OpenFlags.O_APPEND | OpenFlags.O_CLOEXEC, 0);
        Assert.True(fd >= 0, $"open failed: errno {Errno.Last}");
        using var handle = new Microsoft.Win32.SafeHandles.SafeFileHandle(fd, ownsHandle: true);
        byte[] data = new byte[count];
        fixed (byte* p = data)
        {
            Assert.Equal(count, (int)Libc.PWrite(handle, p, (nuint)count, 0));
        }
    }

    [Theory]
    [MemberData(nameof(Configurations))]
    public void Length_with_FileShare_Read_sees_other_writers_as_FileStream_does(StreamConfiguration configuration)
    {
        using var dir = new TempDirectory();
        File.WriteAllBytes(dir.File("system"), new byte[4096]);
        File.WriteAllBytes(dir.File("spindle"), new byte[4096]);
        using FileStream system = configuration.OpenSystem(dir.File("system"), FileMode.Open, FileAccess.Read, FileShare.Read);
        using SpindleFileStream spindle = configuration.OpenSpindle(dir.File("spindle"), FileMode.Open, FileAccess.Read, FileShare.Read);
        Assert.Equal(system.Length, spindle.Length);

        // FileShare.Read does not keep a second writer of this process out on Linux (System.IO's flock is
        // shared unless FileShare.None): whatever happens, it happens on both sides.
        static void WriteThroughSecondStream(Func<Stream> open)
        {
            using Stream writer = open();
            writer.Seek(0, SeekOrigin.End);
            writer.Write(new byte[500]);
        }
        Type? systemError = Record.Exception(() => WriteThroughSecondStream(
            () => new FileStream(dir.File("system"), FileMode.Open, FileAccess.Write, FileShare.ReadWrite)))?.GetType();
        Type? spindleError = Record.Exception(() => WriteThroughSecondStream(
            () => new SpindleFileStream(dir.File("spindle"), FileMode.Open, FileAccess.Write, FileShare.ReadWrite)))?.GetType();
        Assert.Equal(systemError, spindleError);
        Assert.Equal(system.Length, spindle.Length);
        long afterSecond = system.Length;

        // A writer that takes no lock is not stopped; a cached length would miss its bytes.
        GrowWithoutLock(dir.File("system"), 1000);
        GrowWithoutLock(dir.File("spindle"), 1000);
        Assert.Equal(afterSecond + 1000, system.Length);
        Assert.Equal(system.Length, spindle.Length);
        Assert.Equal(system.Seek(0, SeekOrigin.End), spindle.Seek(0, SeekOrigin.End));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task The_FileOptions_constructor_with_FILE_FLAG_NO_BUFFERING_gets_the_direct_layer(bool useAsync)
    {
        using var dir = new TempDirectory();
        FileOptions options = SpindleFileOptions.NoBuffering | (useAsync ? FileOptions.Asynchronous : FileOptions.None);
        byte[] data = new byte[10_000];
        new Random(11).NextBytes(data);
        await using (var system = new FileStream(dir.File("system"), FileMode.Create, FileAccess.ReadWrite, FileShare.Read, 4096, options))
        await using (var spindle = new SpindleFileStream(dir.File("spindle"), FileMode.Create, FileAccess.ReadWrite, FileShare.Read, 4096, options))
        {
            Assert.True(SpindleFile.IsDirectIO(spindle.SafeFileHandle));
            foreach (Stream stream in new Stream[] { system, spindle })
            {
                // Sizes and offsets no O_DIRECT call accepts as they are: the direct layer must align them.
                await stream.WriteAsync(data.AsMemory(0, 100));
                await stream.WriteAsync(data.AsMemory(100, 5003));
                stream.Position = 17;
                await stream.WriteAsync(data.AsMemory(0, 999));
            }
            Assert.Equal(system.Length, spindle.Length);
        }
        Assert.Equal(File.ReadAllBytes(dir.File("system")), File.ReadAllBytes(dir.File("spindle")));
    }
}
