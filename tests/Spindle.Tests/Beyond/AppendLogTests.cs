using System.Diagnostics;
using System.Text;
using Microsoft.Win32.SafeHandles;
using Spindle.Append;
using Spindle.Tests.Infrastructure;
using Framing = Spindle.AppendLog;

namespace Spindle.Tests.Beyond;

/// <summary>
/// Length + CRC-32C framing for atomic append: frames written by several processes read back whole, and a
/// record torn by a writer killed in the middle of its write(2) is skipped without losing any other.
/// </summary>
public class AppendLogTests
{
    private static readonly SpindleFileOptions Append = new() { Mode = FileMode.OpenOrCreate, Access = FileAccess.Write, AtomicAppend = true };

    [Fact]
    public void Crc32C_matches_the_standard_check_value()
    {
        Assert.Equal(0xE3069283u, Checksum("123456789"u8));
        Assert.Equal(0u, Checksum([]));
        Assert.Equal(0x8A9136AAu, Checksum(new byte[32]));
        // Fed in pieces, as the framing does, it is the same.
        Assert.Equal(0xE3069283u, Crc32C.Finish(Crc32C.Append(Crc32C.Append(Crc32C.Seed, "1234"u8), "56789"u8)));
    }

    private static uint Checksum(ReadOnlySpan<byte> data) => Crc32C.Finish(Crc32C.Append(Crc32C.Seed, data));

    public static TheoryData<string> Ways => new() { "handle", "stream", "unbuffered stream" };

    [Theory]
    [MemberData(nameof(Ways))]
    public void Frames_of_every_size_read_back_whole_and_in_order(string way)
    {
        using var dir = new TempDirectory();
        string path = dir.File("log");
        int[] sizes = [0, 1, 7, 8, 100, 1011, 1012, 1013, 4084, 4085, 5000, 70_000];
        byte[][] payloads = sizes.Select((size, i) => Payload(1, i, size)).ToArray();
        if (way == "handle")
        {
            using SafeFileHandle handle = SpindleFile.OpenHandle(path, Append);
            foreach (byte[] payload in payloads)
            {
                Framing.Append(handle, payload);
            }
        }
        else
        {
            using var stream = new SpindleFileStream(path, new SpindleFileOptions
            {
                Mode = FileMode.OpenOrCreate, Access = FileAccess.Write, AtomicAppend = true, BufferSize = way == "stream" ? 4096 : 0,
            });
            foreach (byte[] payload in payloads)
            {
                Framing.Append(stream, payload);
            }
        }
        AppendLogScan scan = Framing.ReadAll(path);
        Assert.Empty(scan.Damaged);
        Assert.Equal(payloads.Select(Convert.ToHexString), scan.Records.Select(r => Convert.ToHexString(r.Span)));
        Assert.Equal(payloads.Sum(p => (long)FrameOf(p).Length), new FileInfo(path).Length);
    }

    [Fact]
    public void A_handle_opened_without_append_is_refused_and_the_file_is_unchanged()
    {
        using var dir = new TempDirectory();
        string path = dir.File("log");
        File.WriteAllBytes(path, [1, 2, 3]);
        using SafeFileHandle handle = SpindleFile.OpenHandle(path, FileMode.Open, FileAccess.Write);
        ArgumentException e = Assert.Throws<ArgumentException>(() => Framing.Append(handle, [9, 9]));
        Assert.Equal("handle", e.ParamName);
        Assert.Equal(new byte[] { 1, 2, 3 }, File.ReadAllBytes(path));
    }

    [Fact]
    public void Damage_costs_only_the_records_it_touches()
    {
        byte[][] payloads = Enumerable.Range(0, 20).Select(i => Payload(2, i, 10 + i * 37)).ToArray();
        var file = new MemoryStream();
        foreach (byte[] payload in payloads)
        {
            Framing.Append(file, payload);
        }
        byte[] bytes = file.ToArray();
        long Start(int record) => payloads.Take(record).Sum(p => (long)FrameOf(p).Length);

        // A flipped byte in record 5's payload, a flipped length in record 12, and the last record cut short.
        bytes[Start(5) + 15] ^= 0x40;
        bytes[Start(12) + 2] ^= 0x01;
        byte[] cut = bytes[..(int)(Start(19) + 9)];

        AppendLogScan scan = Framing.Scan(cut);
        int[] kept = [.. Enumerable.Range(0, 19).Where(i => i is not 5 and not 12)];
        Assert.Equal(kept.Select(i => Convert.ToHexString(payloads[i])), scan.Records.Select(r => Convert.ToHexString(r.Span)));
        Assert.Equal(
            [(Start(5), Start(6) - Start(5)), (Start(12), Start(13) - Start(12)), (Start(19), 9L)],
            scan.Damaged);
    }

    [Fact]
    public async Task A_writer_killed_mid_record_leaves_one_torn_record_and_every_whole_record_reads_back()
    {
        using var dir = new TempDirectory();
        string path = dir.File("log");
        // Writer 1 appends 50 records, then the first half of a 5,012-byte frame with a raw write(2), and
        // kills itself with SIGKILL (as kill -9 in the middle of a large write leaves it); writer 2 appends
        // at the same time. Writers 3 and 4 start after the kill, so whole records follow the torn one.
        Task<(int, string)> killed = Run(path, writer: 1, records: 50, tear: true);
        Task<(int, string)> beside = Run(path, writer: 2, records: 300, tear: false);
        (int killedCode, string killedOutput) = await killed;
        Assert.True(killedCode == 128 + 9, $"writer 1 exited with {killedCode}: {killedOutput}");
        Task<(int, string)> after1 = Run(path, writer: 3, records: 300, tear: false);
        Task<(int, string)> after2 = Run(path, writer: 4, records: 300, tear: false);
        foreach ((int code, string output) in await Task.WhenAll(beside, after1, after2))
        {
            Assert.True(code == 0, output);
        }

        AppendLogScan scan = Framing.ReadAll(path);
        var seen = scan.Records.Select(r => Encoding.ASCII.GetString(r.Span)).Select(text => text[..text.IndexOf('|')]).ToList();
        Assert.Equal(seen.Count, seen.Distinct().Count());
        var expected = new[] { (1, 50), (2, 300), (3, 300), (4, 300) }
            .SelectMany(w => Enumerable.Range(0, w.Item2).Select(i => $"{w.Item1}:{i}"));
        Assert.Equal(expected.Order(), seen.Order());
        Assert.All(scan.Records, r => Assert.Equal(r.ToArray(), Payload(Header(r)).ToArray()));
        (long offset, long length) = Assert.Single(scan.Damaged);
        Assert.Equal(FrameOf(Payload(1, 50, 5000)).Length / 2, length);
        Assert.True(offset + length < new FileInfo(path).Length, "the torn record is followed by whole ones");
    }

    private static Task<(int, string)> Run(string path, int writer, int records, bool tear) =>
        Task.Run(() => ChildProcess.Run(typeof(AppendLogTests), nameof(AppendInChild), null,
            path, writer.ToString(), records.ToString(), tear.ToString()));

    /// <summary>Child: appends framed records; with a tear, then half a frame and SIGKILL.</summary>
    public static int AppendInChild(string[] args)
    {
        int writer = int.Parse(args[1]);
        int records = int.Parse(args[2]);
        using SafeFileHandle handle = SpindleFile.OpenHandle(args[0], Append);
        for (int i = 0; i < records; i++)
        {
            Framing.Append(handle, Payload(writer, i, 16 + (i * 997 + writer * 31) % 3000));
        }
        if (bool.Parse(args[3]))
        {
            byte[] frame = FrameOf(Payload(writer, records, 5000));
            SpindleRandomAccess.Write(handle, frame.AsSpan(0, frame.Length / 2), 0);
            Process.GetCurrentProcess().Kill();
        }
        return 0;
    }

    private static byte[] FrameOf(byte[] payload)
    {
        byte[] frame = new byte[Framing.GetMaxFrameLength(payload.Length)];
        return frame[..Framing.WriteFrame(payload, frame)];
    }

    // "writer:sequence|" (cut short in tiny payloads) then lowercase letters that follow from the header.
    private static byte[] Payload(int writer, int sequence, int length)
    {
        byte[] header = Encoding.ASCII.GetBytes($"{writer}:{sequence}|");
        byte[] payload = new byte[Math.Max(length, header.Length)];
        header.CopyTo(payload, 0);
        for (int i = header.Length; i < payload.Length; i++)
        {
            payload[i] = (byte)('a' + (writer * 7 + sequence * 3 + i) % 26);
        }
        return payload[..length];
    }

    private static (int Writer, int Sequence, int Length) Header(ReadOnlyMemory<byte> record)
    {
        string text = Encoding.ASCII.GetString(record.Span);
        string[] parts = text[..text.IndexOf('|')].Split(':');
        return (int.Parse(parts[0]), int.Parse(parts[1]), record.Length);
    }

    private static byte[] Payload((int Writer, int Sequence, int Length) header) => Payload(header.Writer, header.Sequence, header.Length);
}
