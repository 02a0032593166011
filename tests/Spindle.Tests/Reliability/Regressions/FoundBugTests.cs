using Microsoft.Win32.SafeHandles;
using Spindle.Tests.Infrastructure;
using SysRandomAccess = System.IO.RandomAccess;

namespace Spindle.Tests.Reliability.Regressions;

/// <summary>
/// Regression tests for the bugs the reliability suite found, one per bug, each named after what must
/// hold and citing the fuzzer seed that found it.
/// </summary>
public class FoundBugTests
{
    /// <summary>
    /// Fuzzer seed 20270539 reported io_uring giving ArgumentOutOfRangeException (EFBIG) where System.IO gives
    /// IOException (EINVAL) for a write ending beyond long.MaxValue. The cause was the seam: it had shortened the
    /// request (so it no longer overflowed); the seam now leaves such offsets alone. This test keeps the engines'
    /// answer to the real request in line with System.IO.
    /// </summary>
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_write_ending_beyond_long_MaxValue_fails_like_System_IO_on_every_engine(bool gather)
    {
        using var dir = new TempDirectory();
        using SafeFileHandle system = File.OpenHandle(dir.File("s"), FileMode.Create, FileAccess.ReadWrite);
        long offset = long.MaxValue - 1986;
        ReadOnlyMemory<byte>[] buffers = [new byte[686], new byte[4925], new byte[2580]];
        Exception expected = await Assert.ThrowsAnyAsync<Exception>(async () =>
        {
            if (gather) await SysRandomAccess.WriteAsync(system, buffers, offset); else await SysRandomAccess.WriteAsync(system, new byte[8191], offset);
        });
        foreach (IoEngine engine in Enum.GetValues<IoEngine>())
        {
            using SafeFileHandle handle = SpindleFile.OpenHandle(dir.File(engine.ToString()), FileMode.Create, FileAccess.ReadWrite);
            Exception actual = await Assert.ThrowsAnyAsync<Exception>(async () =>
            {
                if (gather) await SpindleRandomAccess.WriteAsync(handle, buffers, offset, engine); else await SpindleRandomAccess.WriteAsync(handle, new byte[8191], offset, engine);
            }).WaitAsync(TimeSpan.FromSeconds(30));
            Assert.True(expected.GetType() == actual.GetType() && expected.HResult == actual.HResult,
                $"{engine}: System.IO threw {expected.GetType().Name} ({expected.HResult}), Spindle {actual.GetType().Name} ({actual.HResult})");
            Assert.Equal(0, new FileInfo(dir.File(engine.ToString())).Length);
        }
    }

    /// <summary>
    /// Stream fuzzer seeds 20261161 and 20261428: CopyToAsync on a stream that cannot read throws
    /// NotSupportedException at once in System.IO, before touching the write buffer; Spindle returned a
    /// faulted task and flushed the buffered bytes first.
    /// </summary>
    [Fact]
    public Task CopyToAsync_on_a_write_only_stream_throws_at_once_and_flushes_nothing() => ReliabilityKit.Bounded(async () =>
    {
        using var dir = new TempDirectory();
        File.WriteAllBytes(dir.File("s"), new byte[100]);
        File.WriteAllBytes(dir.File("d"), new byte[100]);
        await using var system = new FileStream(dir.File("s"), FileMode.Open, FileAccess.Write);
        await using var spindle = new SpindleFileStream(dir.File("d"), FileMode.Open, FileAccess.Write);
        system.Write([1, 2, 3]);
        spindle.Write([1, 2, 3]);

        Assert.Throws<NotSupportedException>(() => { _ = system.CopyToAsync(new MemoryStream()); });
        Assert.Throws<NotSupportedException>(() => { _ = spindle.CopyToAsync(new MemoryStream()); });
        Assert.Equal(File.ReadAllBytes(dir.File("s")), File.ReadAllBytes(dir.File("d")));
    });

    /// <summary>
    /// Found while extending the fuzzer to direct I/O: a buffered <see cref="SpindleFileStream"/> with
    /// <see cref="SpindleFileOptions.DirectIO"/> hands its misaligned buffer to an O_DIRECT write and fails with
    /// IOException (EINVAL) from the kernel. SPEC §4: the stream's own buffer satisfies the alignment, or a misaligned
    /// call is refused up front with ArgumentException, before any system call.
    /// </summary>
    [Fact]
    public Task A_direct_stream_writes_like_FileStream_or_refuses_up_front() => ReliabilityKit.Bounded(() =>
    {
        using var dir = new TempDirectory();
        byte[] data = ReliabilityKit.Pattern(5010, 3);
        try
        {
            using (var stream = new SpindleFileStream(dir.File("f"), new SpindleFileOptions { Mode = FileMode.Create, Access = FileAccess.ReadWrite, DirectIO = true }))
            {
                stream.Write(data, 0, 10);
                stream.Write(data, 10, 5000);
            }
            Assert.Equal(data, File.ReadAllBytes(dir.File("f")));
        }
        catch (ArgumentException)
        {
            Assert.True(!File.Exists(dir.File("f")) || new FileInfo(dir.File("f")).Length == 0, "refused, but after writing");
        }
        return Task.CompletedTask;
    });
}
