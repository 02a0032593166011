using Xunit.Abstractions;
using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.RandomAccess;

/// <summary>
/// Partial pwrite/pwritev results forced for real: a full tmpfs (ENOSPC after a short write), a file-size
/// limit (RLIMIT_FSIZE, EFBIG after a short write) and a pipe drained by a concurrent reader. Every
/// byte that reached the file is checked, and the outcome is compared with System.IO's.
/// </summary>
public partial class SyncPartialWriteTests
{
    private readonly ITestOutputHelper _output;

    public SyncPartialWriteTests(ITestOutputHelper output) => _output = output;

    private static byte[] Pattern(int length, int seed)
    {
        var data = new byte[length];
        new Random(seed).NextBytes(data);
        return data;
    }

    private static ReadOnlyMemory<byte>[] Cut(byte[] data, int piece)
    {
        var buffers = new List<ReadOnlyMemory<byte>>();
        for (int start = 0; start < data.Length; start += piece)
        {
            buffers.Add(data.AsMemory(start, Math.Min(piece, data.Length - start)));
        }
        return buffers.ToArray();
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void Full_disk_keeps_every_byte_written_before_ENOSPC_like_System_IO(bool gather)
    {
        byte[] data = Pattern(3 << 20, 5);
        var results = new List<string>();
        foreach (RandomAccessApi api in new[] { RandomAccessApi.SystemIo, RandomAccessApi.Spindle })
        {
            // A file system of each side's own: space freed by deleting the other side's file comes back only when
            // the last reference to it goes, and a child process another test forks at that moment holds one too.
            using TmpfsMount? mount = TmpfsMount.TryMount("1m", out string reason);
            if (mount is null)
            {
                SkipReport.Print(_output, "Full_disk", reason);
                return;
            }
            string path = mount.File(api.Name);
            Outcome outcome;
            using (SafeFileHandle handle = api.Open(path, FileMode.CreateNew, FileAccess.Write))
            {
                // 7001-byte pieces: the space runs out in the middle of an iovec.
                outcome = gather
                    ? Outcome.Of(() => api.Write(handle, Cut(data, 7001), 100))
                    : Outcome.Of(() => api.Write(handle, data, 100));
            }
            byte[] disk = File.ReadAllBytes(path);
            Assert.True(disk.Length > 100 && disk.Length < data.Length + 100, $"{api}: {disk.Length} bytes");
            Assert.Equal(new byte[100], disk.AsSpan(0, 100).ToArray());
            Assert.True(data.AsSpan(0, disk.Length - 100).SequenceEqual(disk.AsSpan(100)), $"{api}: the bytes on disk are not the data's prefix");
            results.Add($"{outcome} length={disk.Length}");
        }
        Assert.Equal("IOException hr=28", results[0].Split(" length")[0]);
        Assert.Equal(results[0], results[1]);
    }

    private const int FileSizeLimit = 100_000;

    [LibraryImport("libc", EntryPoint = "setrlimit", SetLastError = true)]
    private static partial int SetRLimit(int resource, in ResourceLimit limit);

    [LibraryImport("libc", EntryPoint = "signal")]
    private static partial nint Signal(int signal, nint handler);

    private struct ResourceLimit
    {
        public ulong Current;
        public ulong Maximum;
    }

    /// <summary>Child: under RLIMIT_FSIZE, writes past the limit with each library and prints outcome and length.</summary>
    public static int WriteBeyondFileSizeLimit(string[] args)
    {
        const int SIGXFSZ = 25, RLIMIT_FSIZE = 1;
        Signal(SIGXFSZ, 1 /* SIG_IGN: get EFBIG instead of being killed */);
        if (SetRLimit(RLIMIT_FSIZE, new ResourceLimit { Current = FileSizeLimit, Maximum = ulong.MaxValue }) != 0)
        {
            Console.Write($"setrlimit failed: {Marshal.GetLastPInvokeError()}");
            return 2;
        }
        byte[] data = Pattern(150_050, 9);
        foreach (RandomAccessApi api in new[] { RandomAccessApi.SystemIo, RandomAccessApi.Spindle })
        {
            foreach (bool gather in new[] { true, false })
            {
                string path = Path.Combine(args[0], $"{api.Name}-{gather}");
                Outcome outcome;
                using (SafeFileHandle handle = api.Open(path, FileMode.CreateNew, FileAccess.Write))
                {
                    // 3001-byte pieces: the limit falls inside the 34th iovec.
                    outcome = gather ? Outcome.Of(() => api.Write(handle, Cut(data, 3001), 0)) : Outcome.Of(() => api.Write(handle, data, 0));
                }
                byte[] disk = File.ReadAllBytes(path);
                bool prefix = data.AsSpan(0, disk.Length).SequenceEqual(disk);
                Console.WriteLine($"{api.Name} gather={gather}: {outcome} length={disk.Length} prefix={prefix}");
            }
        }
        return 0;
    }

    [Fact]
    public void File_size_limit_stops_a_gather_write_inside_an_iovec_and_keeps_the_prefix()
    {
        using var directory = new TempDirectory();
        (int code, string output) = ChildProcess.Run(typeof(SyncPartialWriteTests), nameof(WriteBeyondFileSizeLimit), null, directory.Path);
        Assert.True(code == 0, output);
        string[] lines = output.Trim().Split('\n');
        Assert.Equal(4, lines.Length);
        foreach (string line in lines)
        {
            Assert.EndsWith($"length={FileSizeLimit} prefix=True", line);
        }
        // Same outcome (EFBIG surfaces as System.IO's ArgumentOutOfRangeException) in both libraries.
        Assert.Equal(lines[0].Replace("System.IO", ""), lines[2].Replace("Spindle", ""));
        Assert.Equal(lines[1].Replace("System.IO", ""), lines[3].Replace("Spindle", ""));
    }

    [Fact]
    public async Task Gather_write_of_many_buffers_into_a_pipe_arrives_complete_with_a_concurrent_reader()
    {
        // 3000 buffers (three IOV_MAX chunks) of 1..1000 bytes, far more than the 64 KiB a pipe holds.
        var random = new Random(3);
        byte[][] pieces = Enumerable.Range(0, 3000).Select(_ => { var b = new byte[random.Next(1, 1000)]; random.NextBytes(b); return b; }).ToArray();
        byte[] expected = pieces.SelectMany(b => b).ToArray();
        (SafeFileHandle read, SafeFileHandle write) = TestLibc.CreatePipe();
        using (read)
        {
            Task<byte[]> reader = Task.Run(() =>
            {
                var received = new MemoryStream();
                var buffer = new byte[5000];
                int n;
                while ((n = SpindleRandomAccess.Read(read, buffer, 0)) > 0)
                {
                    received.Write(buffer, 0, n);
                }
                return received.ToArray();
            });
            using (write)
            {
                SpindleRandomAccess.Write(write, pieces.Select(b => (ReadOnlyMemory<byte>)b).ToArray(), 0);
            }
            byte[] got = await reader.WaitAsync(TimeSpan.FromSeconds(30));
            Assert.Equal(expected.Length, got.Length);
            Assert.Equal(expected, got);
        }
    }

    [Fact]
    public void Single_write_of_more_than_MAX_RW_COUNT_into_a_pipe_is_completed()
    {
        // Linux caps one write at 0x7ffff000 bytes; a span cannot exceed int.MaxValue, so a pipe with a
        // concurrent reader shows the short-write loop for a 1 MiB write instead (the pipe takes 64 KiB at a time).
        byte[] data = Pattern(1 << 20, 11);
        (SafeFileHandle read, SafeFileHandle write) = TestLibc.CreatePipe();
        using (read)
        {
            var reader = Task.Run(() =>
            {
                var received = new MemoryStream();
                var buffer = new byte[777];
                int n;
                while ((n = SpindleRandomAccess.Read(read, buffer, 0)) > 0)
                {
                    received.Write(buffer, 0, n);
                }
                return received.ToArray();
            });
            using (write)
            {
                SpindleRandomAccess.Write(write, data, 0);
            }
            Assert.True(reader.Wait(TimeSpan.FromSeconds(30)));
            Assert.Equal(data, reader.Result);
        }
    }
}
