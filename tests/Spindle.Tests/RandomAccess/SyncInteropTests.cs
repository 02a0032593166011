using Microsoft.Win32.SafeHandles;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.RandomAccess;

/// <summary>
/// Handles cross the libraries both ways: System.IO handles work with SpindleRandomAccess, Spindle
/// handles work with System.IO's RandomAccess and FileStream, with identical results.
/// </summary>
public class SyncInteropTests
{
    private static string Script(RandomAccessApi api, SafeFileHandle handle)
    {
        var log = new List<string>();
        log.Add(Outcome.Of(() => { api.Write(handle, "0123456789"u8, 0); return "w"; }).ToString());
        log.Add(Outcome.Of(() => { api.Write(handle, [new byte[] { 65, 66 }, new byte[] { 67 }], 20); return "g"; }).ToString());
        log.Add(Outcome.Of(() => api.GetLength(handle)).ToString());
        log.Add(Outcome.Of(() => { var b = new byte[30]; return api.Read(handle, b, 0) + Convert.ToHexString(b); }).ToString());
        log.Add(Outcome.Of(() => { var a = new byte[4]; var b = new byte[40]; return api.Read(handle, [a, b], 8) + Convert.ToHexString(a) + Convert.ToHexString(b); }).ToString());
        log.Add(Outcome.Of(() => { api.SetLength(handle, 15); return api.GetLength(handle); }).ToString());
        log.Add(Outcome.Of(() => { api.FlushToDisk(handle); return "f"; }).ToString());
        return string.Join(" | ", log);
    }

    [Theory]
    [InlineData(FileAccess.Read)]
    [InlineData(FileAccess.Write)]
    [InlineData(FileAccess.ReadWrite)]
    public void Every_opener_with_every_random_access_api_gives_the_same_results(FileAccess access)
    {
        using var directory = new TempDirectory();
        var results = new List<string>();
        foreach (RandomAccessApi opener in new[] { RandomAccessApi.SystemIo, RandomAccessApi.Spindle })
        {
            foreach (RandomAccessApi api in new[] { RandomAccessApi.SystemIo, RandomAccessApi.Spindle })
            {
                string path = directory.File($"{opener}-{api}");
                File.WriteAllBytes(path, "abcdefghijklmnopqrstuvwxyz"u8.ToArray());
                string script;
                using (SafeFileHandle handle = opener.Open(path, FileMode.Open, access))
                {
                    script = Script(api, handle);
                }
                results.Add($"{script} disk={Convert.ToHexString(File.ReadAllBytes(path))}");
            }
        }
        Assert.All(results, r => Assert.Equal(results[0], r));
    }

    [Theory]
    [InlineData(FileOptions.None)]
    [InlineData(FileOptions.Asynchronous)]
    [InlineData(FileOptions.DeleteOnClose)]
    public void FileStream_over_a_Spindle_handle_behaves_like_over_a_System_IO_handle(FileOptions options)
    {
        using var directory = new TempDirectory();
        var results = new List<string>();
        foreach (RandomAccessApi opener in new[] { RandomAccessApi.SystemIo, RandomAccessApi.Spindle })
        {
            string path = directory.File(opener.Name);
            SafeFileHandle handle = opener.Open(path, FileMode.Create, FileAccess.ReadWrite, FileShare.None, options);
            string state;
            using (var stream = new FileStream(handle, FileAccess.ReadWrite, 4096, isAsync: handle.IsAsync))
            {
                stream.Write("stream data"u8);
                stream.Seek(0, SeekOrigin.Begin);
                var buffer = new byte[6];
                stream.ReadExactly(buffer);
                // The lock travels with the handle: another open is refused while the stream lives.
                Outcome other = Outcome.Of(() => File.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite).Dispose());
                state = $"name={stream.Name == path} async={stream.IsAsync} seek={stream.CanSeek} pos={stream.Position} len={stream.Length} " +
                    $"read={System.Text.Encoding.ASCII.GetString(buffer)} other={other}";
            }
            state += $" closed={handle.IsClosed} exists={File.Exists(path)}";
            if (File.Exists(path))
            {
                state += " disk=" + Convert.ToHexString(File.ReadAllBytes(path));
                File.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.None).Dispose(); // the lock is gone
            }
            results.Add(state);
        }
        Assert.Equal(results[0], results[1]);
        Assert.Contains("name=True", results[1]);
    }

    [Fact]
    public void FileStream_constructor_validation_treats_Spindle_handles_like_System_IO_handles()
    {
        using var directory = new TempDirectory();
        var differences = new List<string>();
        foreach (FileAccess handleAccess in Enum.GetValues<FileAccess>())
        {
            foreach (FileAccess streamAccess in Enum.GetValues<FileAccess>())
            {
                foreach (bool isAsync in new[] { false, true })
                {
                    foreach (FileOptions options in new[] { FileOptions.None, FileOptions.Asynchronous })
                    {
                        string Run(RandomAccessApi opener)
                        {
                            string path = directory.File(opener.Name);
                            File.WriteAllBytes(path, [1, 2, 3]);
                            using SafeFileHandle handle = opener.Open(path, FileMode.Open, handleAccess, FileShare.ReadWrite, options);
                            return Outcome.Of(() =>
                            {
                                using var stream = new FileStream(handle, streamAccess, 1, isAsync);
                                return $"{stream.CanRead}{stream.CanWrite}{stream.Length}";
                            }).ToString();
                        }
                        string expected = Run(RandomAccessApi.SystemIo);
                        string actual = Run(RandomAccessApi.Spindle);
                        if (expected != actual)
                        {
                            differences.Add($"{handleAccess}/{streamAccess}/{isAsync}/{options}: System.IO {expected}, Spindle {actual}");
                        }
                    }
                }
            }
        }
        Assert.True(differences.Count == 0, string.Join("\n", differences));
    }

    [Fact]
    public void Fifo_handle_from_Spindle_is_unseekable_in_FileStream()
    {
        using var directory = new TempDirectory();
        string fifo = directory.File("fifo");
        TestLibc.CreateFifo(fifo);
        using SafeFileHandle handle = SpindleFile.OpenHandle(fifo, FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite);
        using var stream = new FileStream(handle, FileAccess.ReadWrite, bufferSize: 0);
        Assert.False(stream.CanSeek);
        Assert.Throws<NotSupportedException>(() => stream.Position);
        stream.Write("ping"u8);
        var buffer = new byte[4];
        stream.ReadExactly(buffer);
        Assert.Equal("ping"u8.ToArray(), buffer);
    }
}
