using Microsoft.Win32.SafeHandles;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Engines;

/// <summary>Every asynchronous member, on every engine, against System.IO.RandomAccess on the same data.</summary>
public class EngineDifferentialTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    private static byte[] Data(int length, int seed)
    {
        var data = new byte[length];
        new Random(seed).NextBytes(data);
        return data;
    }

    [Theory]
    [MemberData(nameof(EngineCases.All), MemberType = typeof(EngineCases))]
    public async Task ReadAsync_returns_what_System_IO_returns_at_every_offset(IoEngine engine)
    {
        EngineCases.ReportIoUring(engine);
        using var dir = new TempDirectory();
        string path = dir.File("f");
        File.WriteAllBytes(path, Data(100_000, 1));
        using SafeFileHandle spindle = SpindleFile.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
        using SafeFileHandle system = File.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite);

        foreach (long offset in new long[] { 0, 1, 4095, 4096, 99_999, 100_000, 100_001, 1L << 40 })
        {
            foreach (int length in new[] { 0, 1, 4096, 65_537, 200_000 })
            {
                byte[] expected = new byte[length];
                byte[] actual = new byte[length];
                byte[] engineOnly = new byte[length];
                int expectedCount = await System.IO.RandomAccess.ReadAsync(system, expected, offset);
                int actualCount = await SpindleRandomAccess.ReadAsync(spindle, actual, offset, engine).AsTask().WaitAsync(Timeout);
                // The same read without the page-cache fast path, so that the engine itself does it.
                int engineCount = await EngineCases.Resolve(engine).ReadAsync(spindle, engineOnly, offset, useFastPath: false, default).AsTask().WaitAsync(Timeout);
                Assert.Equal(expectedCount, actualCount);
                Assert.Equal(expectedCount, engineCount);
                Assert.Equal(expected, actual);
                Assert.Equal(expected, engineOnly);
            }
        }
    }

    [Theory]
    [MemberData(nameof(EngineCases.All), MemberType = typeof(EngineCases))]
    public async Task Scatter_ReadAsync_returns_what_System_IO_returns(IoEngine engine)
    {
        EngineCases.ReportIoUring(engine);
        using var dir = new TempDirectory();
        string path = dir.File("f");
        File.WriteAllBytes(path, Data(50_000, 2));
        using SafeFileHandle spindle = SpindleFile.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
        using SafeFileHandle system = File.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite);

        foreach (long offset in new long[] { 0, 7, 49_000, 50_000, 60_000 })
        {
            foreach (int[] sizes in new[] { new[] { 10 }, new[] { 0, 100, 0, 4096 }, new[] { 30_000, 30_000 }, Enumerable.Repeat(7, 1024).ToArray(), Enumerable.Repeat(7, 1500).ToArray(), Array.Empty<int>() })
            {
                Memory<byte>[] expected = sizes.Select(s => new Memory<byte>(new byte[s])).ToArray();
                Memory<byte>[] actual = sizes.Select(s => new Memory<byte>(new byte[s])).ToArray();
                // Beyond IOV_MAX buffers System.IO stops after the first 1024 (one preadv); Spindle's
                // synchronous read goes on through the rest, and every engine must agree with it.
                long expectedCount = sizes.Length <= 1024
                    ? await System.IO.RandomAccess.ReadAsync(system, expected, offset)
                    : SpindleRandomAccess.Read(spindle, expected, offset);
                long actualCount = await SpindleRandomAccess.ReadAsync(spindle, actual, offset, engine).AsTask().WaitAsync(Timeout);
                Assert.Equal(expectedCount, actualCount);
                for (int i = 0; i < sizes.Length; i++)
                {
                    Assert.Equal(expected[i].ToArray(), actual[i].ToArray());
                }
            }
        }
    }

    [Theory]
    [MemberData(nameof(EngineCases.All), MemberType = typeof(EngineCases))]
    public async Task WriteAsync_leaves_the_same_bytes_on_disk_as_System_IO(IoEngine engine)
    {
        EngineCases.ReportIoUring(engine);
        using var dir = new TempDirectory();
        using (SafeFileHandle spindle = SpindleFile.OpenHandle(dir.File("s"), FileMode.Create, FileAccess.ReadWrite))
        using (SafeFileHandle system = File.OpenHandle(dir.File("d"), FileMode.Create, FileAccess.ReadWrite))
        {
            int seed = 10;
            foreach (long offset in new long[] { 0, 5000, 1, 300_000, 4096 })
            {
                foreach (int length in new[] { 0, 1, 4096, 100_001 })
                {
                    byte[] data = Data(length, seed++);
                    await System.IO.RandomAccess.WriteAsync(system, data, offset);
                    await SpindleRandomAccess.WriteAsync(spindle, data, offset, engine).AsTask().WaitAsync(Timeout);
                }
            }
            await SpindleRandomAccess.FlushToDiskAsync(spindle, engine).AsTask().WaitAsync(Timeout);
        }
        Assert.Equal(File.ReadAllBytes(dir.File("d")), File.ReadAllBytes(dir.File("s")));
    }

    [Theory]
    [MemberData(nameof(EngineCases.All), MemberType = typeof(EngineCases))]
    public async Task Gather_WriteAsync_leaves_the_same_bytes_on_disk_as_System_IO(IoEngine engine)
    {
        EngineCases.ReportIoUring(engine);
        using var dir = new TempDirectory();
        using (SafeFileHandle spindle = SpindleFile.OpenHandle(dir.File("s"), FileMode.Create, FileAccess.ReadWrite))
        using (SafeFileHandle system = File.OpenHandle(dir.File("d"), FileMode.Create, FileAccess.ReadWrite))
        {
            int seed = 20;
            foreach (long offset in new long[] { 0, 3, 70_000 })
            {
                foreach (int[] sizes in new[] { new[] { 10 }, new[] { 0, 100, 0, 4096 }, new[] { 30_000, 30_001 }, Enumerable.Repeat(3, 1500).ToArray(), Array.Empty<int>() })
                {
                    ReadOnlyMemory<byte>[] buffers = sizes.Select(s => new ReadOnlyMemory<byte>(Data(s, seed++))).ToArray();
                    await System.IO.RandomAccess.WriteAsync(system, buffers, offset);
                    await SpindleRandomAccess.WriteAsync(spindle, buffers, offset, engine).AsTask().WaitAsync(Timeout);
                }
            }
        }
        Assert.Equal(File.ReadAllBytes(dir.File("d")), File.ReadAllBytes(dir.File("s")));
    }

    [Theory]
    [MemberData(nameof(EngineCases.All), MemberType = typeof(EngineCases))]
    public async Task Errors_have_the_types_System_IO_throws(IoEngine engine)
    {
        using var dir = new TempDirectory();
        string path = dir.File("f");
        File.WriteAllBytes(path, Data(100, 3));
        byte[] buffer = new byte[10];

        using (SafeFileHandle writeOnly = SpindleFile.OpenHandle(path, FileMode.Open, FileAccess.Write, FileShare.ReadWrite))
        using (SafeFileHandle systemWriteOnly = File.OpenHandle(path, FileMode.Open, FileAccess.Write, FileShare.ReadWrite))
        {
            Exception expected = await Record.ExceptionAsync(async () => await System.IO.RandomAccess.ReadAsync(systemWriteOnly, buffer, 0));
            Exception actual = await Record.ExceptionAsync(async () => await SpindleRandomAccess.ReadAsync(writeOnly, buffer, 0, engine));
            Exception engineOnly = await Record.ExceptionAsync(async () => await EngineCases.Resolve(engine).ReadAsync(writeOnly, buffer, 0, useFastPath: false, default));
            Assert.NotNull(expected);
            Assert.IsType(expected.GetType(), actual);
            Assert.IsType(expected.GetType(), engineOnly);

            Memory<byte>[] buffers = [buffer];
            expected = await Record.ExceptionAsync(async () => await System.IO.RandomAccess.ReadAsync(systemWriteOnly, buffers, 0));
            actual = await Record.ExceptionAsync(async () => await SpindleRandomAccess.ReadAsync(writeOnly, buffers, 0, engine));
            Assert.IsType(expected.GetType(), actual);
        }

        using (SafeFileHandle readOnly = SpindleFile.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite))
        using (SafeFileHandle systemReadOnly = File.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite))
        {
            Exception expected = await Record.ExceptionAsync(async () => await System.IO.RandomAccess.WriteAsync(systemReadOnly, buffer, 0));
            Exception actual = await Record.ExceptionAsync(async () => await SpindleRandomAccess.WriteAsync(readOnly, buffer, 0, engine));
            Assert.NotNull(expected);
            Assert.IsType(expected.GetType(), actual);

            ReadOnlyMemory<byte>[] buffers = [buffer];
            expected = await Record.ExceptionAsync(async () => await System.IO.RandomAccess.WriteAsync(systemReadOnly, buffers, 0));
            actual = await Record.ExceptionAsync(async () => await SpindleRandomAccess.WriteAsync(readOnly, buffers, 0, engine));
            Assert.IsType(expected.GetType(), actual);

            // Argument errors are thrown by the call itself, before any system call, as System.IO does.
            Assert.Equal(
                Assert.Throws<ArgumentOutOfRangeException>(() => { _ = System.IO.RandomAccess.ReadAsync(systemReadOnly, buffer, -1); }).ParamName,
                Assert.Throws<ArgumentOutOfRangeException>(() => { _ = SpindleRandomAccess.ReadAsync(readOnly, buffer, -1, engine); }).ParamName);
            Assert.Throws<ArgumentNullException>(() => { _ = SpindleRandomAccess.ReadAsync(null!, buffer, 0, engine); });
            Assert.Throws<ArgumentNullException>(() => { _ = SpindleRandomAccess.ReadAsync(readOnly, (IReadOnlyList<Memory<byte>>)null!, 0, engine); });
            Assert.Throws<ArgumentNullException>(() => { _ = SpindleRandomAccess.WriteAsync(readOnly, (IReadOnlyList<ReadOnlyMemory<byte>>)null!, 0, engine); });
        }

        SafeFileHandle closed = SpindleFile.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
        SafeFileHandle systemClosed = File.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite);
        closed.Dispose();
        systemClosed.Dispose();
        Assert.IsType(
            Assert.ThrowsAny<Exception>(() => { _ = System.IO.RandomAccess.ReadAsync(systemClosed, buffer, 0); }).GetType(),
            Assert.ThrowsAny<Exception>(() => { _ = SpindleRandomAccess.ReadAsync(closed, buffer, 0, engine); }));
    }

    [Theory]
    [MemberData(nameof(EngineCases.All), MemberType = typeof(EngineCases))]
    public async Task A_pipe_without_positions_reads_and_writes_in_order(IoEngine engine)
    {
        EngineCases.ReportIoUring(engine);
        using var dir = new TempDirectory();
        using Fifo fifo = new(dir.File("fifo"));
        byte[] data = Data(3000, 4);
        await SpindleRandomAccess.WriteAsync(fifo.Writer, data.AsMemory(0, 1000), 0, engine).AsTask().WaitAsync(Timeout);
        await SpindleRandomAccess.WriteAsync(fifo.Writer, new ReadOnlyMemory<byte>[] { data.AsMemory(1000, 1000), data.AsMemory(2000, 1000) }, 12345, engine).AsTask().WaitAsync(Timeout);

        byte[] read = new byte[3000];
        int total = 0;
        while (total < read.Length)
        {
            int n = await SpindleRandomAccess.ReadAsync(fifo.Reader, read.AsMemory(total), 999, engine).AsTask().WaitAsync(Timeout);
            Assert.True(n > 0);
            total += n;
        }
        Assert.Equal(data, read);
    }
}
