using System.Security.Cryptography;
using Microsoft.Win32.SafeHandles;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.RandomAccess;

/// <summary>
/// Every synchronous member on every kind of handle (read-only, write-only, read-write, closed,
/// invalid, null) with ordinary and extreme arguments: same results, exceptions and bytes as System.IO.
/// </summary>
public class SyncDifferentialTests
{
    private static readonly byte[] Content = Enumerable.Range(0, 300).Select(i => (byte)(i * 7)).ToArray();

    private delegate object? Operation(RandomAccessApi api, SafeFileHandle handle);

    private static readonly (string Name, Operation Run)[] Operations =
    [
        ("read 100 at 0", (api, h) => ReadSpan(api, h, 100, 0)),
        ("read 100 at 250", (api, h) => ReadSpan(api, h, 100, 250)),
        ("read 100 at end", (api, h) => ReadSpan(api, h, 100, 300)),
        ("read 100 past end", (api, h) => ReadSpan(api, h, 100, 10_000)),
        ("read at 2^40", (api, h) => ReadSpan(api, h, 10, 1L << 40)),
        ("read at long.MaxValue", (api, h) => ReadSpan(api, h, 10, long.MaxValue)),
        ("read at long.MaxValue-5", (api, h) => ReadSpan(api, h, 10, long.MaxValue - 5)),
        ("read at -1", (api, h) => ReadSpan(api, h, 10, -1)),
        ("read at long.MinValue", (api, h) => ReadSpan(api, h, 10, long.MinValue)),
        ("read empty at 0", (api, h) => ReadSpan(api, h, 0, 0)),
        ("read empty at -1", (api, h) => ReadSpan(api, h, 0, -1)),
        ("scatter 10,0,20 at 5", (api, h) => ReadList(api, h, [10, 0, 20], 5)),
        ("scatter 200,200 at 0", (api, h) => ReadList(api, h, [200, 200], 0)),
        ("scatter none at 0", (api, h) => ReadList(api, h, [], 0)),
        ("scatter at -1", (api, h) => ReadList(api, h, [5], -1)),
        ("scatter at long.MaxValue", (api, h) => ReadList(api, h, [5, 5], long.MaxValue)),
        ("scatter null list", (api, h) => api.Read(h, (IReadOnlyList<Memory<byte>>)null!, 0)),
        ("write 3 at 0", (api, h) => { api.Write(h, "abc"u8, 0); return null; }),
        ("write 3 at 1000", (api, h) => { api.Write(h, "abc"u8, 1000); return null; }),
        ("write empty at 5000", (api, h) => { api.Write(h, ReadOnlySpan<byte>.Empty, 5000); return null; }),
        ("write at -1", (api, h) => { api.Write(h, "abc"u8, -1); return null; }),
        ("write at 2^40", (api, h) => { api.Write(h, "abc"u8, 1L << 40); return null; }),
        ("write at 2^44", (api, h) => { api.Write(h, "abc"u8, 1L << 44); return null; }),
        ("write at long.MaxValue-1", (api, h) => { api.Write(h, "abc"u8, long.MaxValue - 1); return null; }),
        ("write at long.MaxValue", (api, h) => { api.Write(h, "abc"u8, long.MaxValue); return null; }),
        ("gather 3,0,4 at 2", (api, h) => { api.Write(h, [new byte[] { 1, 2, 3 }, Array.Empty<byte>(), new byte[] { 4, 5, 6, 7 }], 2); return null; }),
        ("gather none at 10", (api, h) => { api.Write(h, Array.Empty<ReadOnlyMemory<byte>>(), 10); return null; }),
        ("gather at -1", (api, h) => { api.Write(h, [new byte[] { 1 }], -1); return null; }),
        ("gather at long.MaxValue-1", (api, h) => { api.Write(h, [new byte[] { 1, 2 }, new byte[] { 3 }], long.MaxValue - 1); return null; }),
        ("gather null list", (api, h) => { api.Write(h, (IReadOnlyList<ReadOnlyMemory<byte>>)null!, 0); return null; }),
        ("length", (api, h) => api.GetLength(h)),
        ("set length 0", (api, h) => { api.SetLength(h, 0); return null; }),
        ("set length 10", (api, h) => { api.SetLength(h, 10); return null; }),
        ("set length 4096", (api, h) => { api.SetLength(h, 4096); return null; }),
        ("set length 2^40", (api, h) => { api.SetLength(h, 1L << 40); return null; }),
        ("set length 2^44", (api, h) => { api.SetLength(h, 1L << 44); return null; }),
        ("set length long.MaxValue", (api, h) => { api.SetLength(h, long.MaxValue); return null; }),
        ("set length -1", (api, h) => { api.SetLength(h, -1); return null; }),
        ("flush to disk", (api, h) => { api.FlushToDisk(h); return null; }),
    ];

    private static string ReadSpan(RandomAccessApi api, SafeFileHandle handle, int size, long offset)
    {
        var buffer = new byte[size];
        int read = api.Read(handle, buffer, offset);
        return $"{read}:{Convert.ToHexString(buffer)}";
    }

    private static string ReadList(RandomAccessApi api, SafeFileHandle handle, int[] sizes, long offset)
    {
        Memory<byte>[] buffers = sizes.Select(s => new Memory<byte>(new byte[s])).ToArray();
        long read = api.Read(handle, buffers, offset);
        return $"{read}:" + string.Join(",", buffers.Select(b => Convert.ToHexString(b.Span)));
    }

    public static TheoryData<string> HandleKinds() => ["Read", "Write", "ReadWrite", "closed", "invalid", "null", "directory"];

    [Theory]
    [MemberData(nameof(HandleKinds))]
    public void Every_operation_matches_System_IO(string kind)
    {
        var differences = new List<string>();
        foreach ((string name, Operation operation) in Operations)
        {
            string expected = Run(RandomAccessApi.SystemIo, kind, operation);
            string actual = Run(RandomAccessApi.Spindle, kind, operation);
            if (expected != actual)
            {
                differences.Add($"{kind}/{name}:\n  System.IO: {expected}\n  Spindle:   {actual}");
            }
        }
        Assert.True(differences.Count == 0, string.Join("\n", differences));
    }

    private static string Run(RandomAccessApi api, string kind, Operation operation)
    {
        using var directory = new TempDirectory();
        string path = directory.File("data");
        File.WriteAllBytes(path, Content);
        SafeFileHandle? handle = kind switch
        {
            "null" => null,
            "invalid" => new SafeFileHandle((IntPtr)(-1), ownsHandle: true),
            "directory" => TestLibc.OpenDirectory(directory.Path),
            "closed" => api.Open(path, FileMode.Open, FileAccess.ReadWrite),
            _ => api.Open(path, FileMode.Open, Enum.Parse<FileAccess>(kind)),
        };
        if (kind == "closed")
        {
            handle!.Dispose();
        }
        string outcome;
        string length;
        using (handle)
        {
            outcome = Outcome.Of(() => operation(api, handle!)).ToString();
            length = handle is { IsClosed: false, IsInvalid: false } ? System.IO.RandomAccess.GetLength(handle).ToString() : "-";
        }
        // Sparse files of a terabyte are compared by length and a hash of their start and end.
        long size = new FileInfo(path).Length;
        string disk;
        using (FileStream stream = File.OpenRead(path))
        {
            var head = new byte[Math.Min(size, 64 * 1024)];
            stream.ReadExactly(head);
            var tail = new byte[Math.Min(size, 4096)];
            stream.Seek(-tail.Length, SeekOrigin.End);
            stream.ReadExactly(tail);
            disk = Convert.ToHexString(SHA256.HashData(head.Concat(tail).ToArray()));
        }
        return $"{outcome} handle-length={length} disk-length={size} disk={disk[..16]}";
    }
}
