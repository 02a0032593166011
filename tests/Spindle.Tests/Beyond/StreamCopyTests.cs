using Spindle.Diagnostics;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Beyond;

/// <summary>SpindleFileStream.CopyTo(Async) into file streams, beside FileStream.CopyTo doing the same.</summary>
[Collection(MeterCollection.Name)]
public class StreamCopyTests
{
    [Theory]
    [InlineData(0, 0, 0, false, false)]
    [InlineData(1_000_000, 0, 0, false, false)]
    [InlineData(1_000_000, 12_345, 500, false, false)]
    [InlineData(1_000_000, 999_999, 100_000, true, false)]
    [InlineData(300_000, 400_000, 10, false, true)]
    [InlineData(5_000_000, 4096, 4096, true, true)]
    public async Task CopyTo_a_file_stream_matches_FileStream_CopyTo(int sourceLength, int sourcePosition, int destinationPosition,
        bool spindleDestination, bool async)
    {
        using var dir = new TempDirectory();
        byte[] source = CopyTests.RandomBytes(sourceLength, sourceLength);
        byte[] existing = CopyTests.RandomBytes(200_000, 3);
        File.WriteAllBytes(dir.File("source"), source);
        File.WriteAllBytes(dir.File("expected"), existing);
        File.WriteAllBytes(dir.File("actual"), existing);

        long expectedSourcePosition, expectedDestinationPosition;
        using (var from = new FileStream(dir.File("source"), FileMode.Open, FileAccess.Read))
        using (var to = new FileStream(dir.File("expected"), FileMode.Open, FileAccess.ReadWrite))
        {
            from.Position = sourcePosition;
            to.Position = destinationPosition;
            to.Write([7, 7, 7]); // pending in the destination's buffer
            if (async)
            {
                await from.CopyToAsync(to);
            }
            else
            {
                from.CopyTo(to);
            }
            (expectedSourcePosition, expectedDestinationPosition) = (from.Position, to.Position);
        }

        long operations = SpindleTotals.Snapshot().Operations;
        using (var from = new SpindleFileStream(dir.File("source"), FileMode.Open, FileAccess.Read))
        using (Stream to = spindleDestination
            ? new SpindleFileStream(dir.File("actual"), FileMode.Open, FileAccess.ReadWrite)
            : new FileStream(dir.File("actual"), FileMode.Open, FileAccess.ReadWrite))
        {
            from.Position = sourcePosition;
            to.Position = destinationPosition;
            to.Write([7, 7, 7]);
            if (async)
            {
                await from.CopyToAsync(to).WaitAsync(TimeSpan.FromSeconds(30));
            }
            else
            {
                from.CopyTo(to);
            }
            Assert.Equal(expectedSourcePosition, from.Position);
            Assert.Equal(expectedDestinationPosition, to.Position);
        }
        long copied = Math.Max(0, sourceLength - sourcePosition);
        // copy_file_range moves up to 64 MiB per call, where a read/write loop needs two calls per 80 KiB.
        Assert.True(SpindleTotals.Snapshot().Operations - operations <= 4 + copied / (64 << 20) + (spindleDestination ? 2 : 0),
            $"{SpindleTotals.Snapshot().Operations - operations} operations for {copied} bytes");
        Assert.Equal(File.ReadAllBytes(dir.File("expected")), File.ReadAllBytes(dir.File("actual")));
    }

    [Fact]
    public void CopyTo_a_memory_stream_uses_the_ordinary_loop()
    {
        using var dir = new TempDirectory();
        byte[] source = CopyTests.RandomBytes(100_000, 5);
        File.WriteAllBytes(dir.File("source"), source);
        using var from = new SpindleFileStream(dir.File("source"), FileMode.Open, FileAccess.Read);
        from.Position = 10;
        var to = new MemoryStream();
        from.CopyTo(to);
        Assert.Equal(source[10..], to.ToArray());
    }
}
