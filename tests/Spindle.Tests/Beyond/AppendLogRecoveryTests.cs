using System.Buffers.Binary;
using System.Text;
using Spindle.Tests.Infrastructure;
using Framing = Spindle.AppendLog;

namespace Spindle.Tests.Beyond;

/// <summary>
/// Recovery never returns a record that was not appended, whatever a torn record's payload holds, and scans
/// damage in time linear in its size.
/// </summary>
public class AppendLogRecoveryTests
{
    // A payload that holds a whole frame of its own ("hello"), as a record that stores log data would.
    private static byte[] PayloadEmbeddingAFrame()
    {
        byte[] inner = new byte[64];
        int innerLength = Framing.WriteFrame("hello"u8, inner);
        return [.. "before "u8, .. inner.AsSpan(0, innerLength), .. " after, and some more bytes"u8];
    }

    private static byte[] Frame(ReadOnlySpan<byte> payload)
    {
        var stream = new MemoryStream();
        Framing.Append(stream, payload);
        return stream.ToArray();
    }

    public static TheoryData<string> Tears => new() { "torn, then a whole record", "cut at the end of the file" };

    [Theory]
    [MemberData(nameof(Tears))]
    public void A_frame_inside_a_torn_records_payload_is_never_returned(string tear)
    {
        byte[] first = Frame("first"u8);
        byte[] embedding = Frame(PayloadEmbeddingAFrame());
        // The writer of the embedding record died after the embedded frame, before the rest of its payload.
        int written = embedding.Length - 10;
        byte[] last = tear == "torn, then a whole record" ? Frame("last"u8) : [];
        byte[] file = [.. first, .. embedding.AsSpan(0, written), .. last];

        long before = EngineCounts.BytesDecodedOnThisThread;
        AppendLogScan scan = Framing.Scan(file);
        long decoded = EngineCounts.BytesDecodedOnThisThread - before;

        string[] expected = tear == "torn, then a whole record" ? ["first", "last"] : ["first"];
        Assert.Equal(expected, scan.Records.Select(r => Encoding.ASCII.GetString(r.Span)));
        Assert.Equal([((long)first.Length, (long)written)], scan.Damaged);
    }

    [Fact]
    public void A_whole_record_whose_payload_embeds_a_frame_reads_back_as_itself()
    {
        byte[] payload = PayloadEmbeddingAFrame();
        byte[] file = [.. Frame(payload), .. Frame("next"u8)];
        long before = EngineCounts.BytesDecodedOnThisThread;
        AppendLogScan scan = Framing.Scan(file);
        long decoded = EngineCounts.BytesDecodedOnThisThread - before;
        Assert.Equal([Convert.ToHexString(payload), Convert.ToHexString("next"u8)], scan.Records.Select(r => Convert.ToHexString(r.Span)));
        Assert.Empty(scan.Damaged);
    }

    // A damaged stretch full of plausible headers: frames of the old format (a marker and a length that
    // claims the rest of the file) and pieces that decode to 254 bytes claiming a length of their own. Each
    // byte is decoded and checksummed at most once, so the scan is linear in the size of the damage.
    [Theory]
    [InlineData(2)]
    [InlineData(16)]
    public void A_damaged_stretch_of_plausible_headers_is_scanned_in_linear_work(int mebibytes)
    {
        byte[] damage = new byte[mebibytes << 20];
        for (int p = 0; p + 16 <= damage.Length / 2; p += 16)
        {
            "SPRC"u8.CopyTo(damage.AsSpan(p));
            BinaryPrimitives.WriteInt32LittleEndian(damage.AsSpan(p + 4), damage.Length - p - 12);
            damage.AsSpan(p + 8, 8).Fill(0x41);
        }
        for (int p = damage.Length / 2; p + 256 <= damage.Length; p += 256)
        {
            damage[p] = 0;
            damage[p + 1] = 0xFF;
            BinaryPrimitives.WriteInt32LittleEndian(damage.AsSpan(p + 2), 0x7F7F7F7F);
            damage.AsSpan(p + 6, 250).Fill(0x42);
        }
        damage[^1] = 0x43;
        byte[] first = Frame("first"u8), last = Frame("last"u8);
        byte[] file = [.. first, .. damage, .. last];

        long before = EngineCounts.BytesDecodedOnThisThread;
        AppendLogScan scan = Framing.Scan(file);
        long decoded = EngineCounts.BytesDecodedOnThisThread - before;

        Assert.Equal(["first", "last"], scan.Records.Select(r => Encoding.ASCII.GetString(r.Span)));
        Assert.Equal([((long)first.Length, (long)damage.Length)], scan.Damaged);
        Assert.True(decoded <= file.Length, $"{decoded} bytes decoded and checksummed for a log of {file.Length}");
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_reader_returns_the_records_a_scan_does_a_chunk_at_a_time(bool asynchronous)
    {
        using var dir = new TempDirectory();
        string path = dir.File("log");
        var random = new Random(6);
        byte[][] payloads = Enumerable.Range(0, 300).Select(i => new byte[i == 150 ? 200_000 : random.Next(0, 600)]).ToArray();
        using (var stream = new FileStream(path, FileMode.Create))
        {
            for (int i = 0; i < payloads.Length; i++)
            {
                random.NextBytes(payloads[i]);
                if (i == 40)
                {
                    stream.Write(Frame(payloads[i]).AsSpan(0, 30)); // torn
                    continue;
                }
                Framing.Append(stream, payloads[i]);
            }
        }
        AppendLogScan scan = Framing.ReadAll(path);
        Assert.Equal(payloads.Where((_, i) => i != 40).Select(Convert.ToHexString), scan.Records.Select(r => Convert.ToHexString(r.Span)));
        Assert.Single(scan.Damaged);

        // Through a stream that returns at most 1,000 bytes per read, as a pipe may.
        using var reader = new AppendLogReader(new ChunkedStream(File.ReadAllBytes(path), 1000));
        var records = new List<string>();
        while (asynchronous ? await reader.ReadAsync() : reader.Read())
        {
            records.Add(Convert.ToHexString(reader.Record.Span));
        }
        Assert.Equal(scan.Records.Select(r => Convert.ToHexString(r.Span)), records);
        Assert.Equal(scan.Damaged, reader.Damaged);
    }

    private sealed class ChunkedStream(byte[] data, int chunk) : MemoryStream(data)
    {
        public override int Read(Span<byte> buffer) => base.Read(buffer[..Math.Min(chunk, buffer.Length)]);

        public override int Read(byte[] buffer, int offset, int count) => base.Read(buffer, offset, Math.Min(chunk, count));

        public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default) =>
            base.ReadAsync(buffer[..Math.Min(chunk, buffer.Length)], cancellationToken);
    }
}
