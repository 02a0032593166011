using Microsoft.Win32.SafeHandles;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.RandomAccess;

/// <summary>Offset-based I/O is thread-safe: no shared position, and a concurrent Dispose never hits another descriptor.</summary>
public class SyncConcurrencyTests
{
    [Fact]
    public void Threads_writing_and_reading_disjoint_ranges_of_one_handle_never_interfere()
    {
        using var directory = new TempDirectory();
        const int Threads = 8, Blocks = 64, BlockSize = 4096;
        using SafeFileHandle handle = SpindleFile.OpenHandle(directory.File("shared"), FileMode.CreateNew, FileAccess.ReadWrite);
        Parallel.For(0, Threads, new ParallelOptions { MaxDegreeOfParallelism = Threads }, thread =>
        {
            var block = new byte[BlockSize];
            for (int i = 0; i < Blocks; i++)
            {
                long offset = ((long)i * Threads + thread) * BlockSize;
                block.AsSpan().Fill((byte)(thread * 16 + i % 16));
                if (i % 2 == 0)
                {
                    SpindleRandomAccess.Write(handle, block, offset);
                }
                else
                {
                    SpindleRandomAccess.Write(handle, [block.AsMemory(0, 100), block.AsMemory(100)], offset);
                }
            }
        });
        Assert.Equal((long)Threads * Blocks * BlockSize, SpindleRandomAccess.GetLength(handle));
        Parallel.For(0, Threads, thread =>
        {
            var block = new byte[BlockSize];
            for (int i = 0; i < Blocks; i++)
            {
                long offset = ((long)i * Threads + thread) * BlockSize;
                Assert.Equal(BlockSize, SpindleRandomAccess.Read(handle, block, offset));
                Assert.True(block.AsSpan().IndexOfAnyExcept((byte)(thread * 16 + i % 16)) < 0);
            }
        });
    }

    [Fact]
    public void Dispose_during_reads_gives_ObjectDisposedException_or_a_complete_read()
    {
        using var directory = new TempDirectory();
        string path = directory.File("data");
        File.WriteAllBytes(path, new byte[1 << 16]);
        for (int round = 0; round < 20; round++)
        {
            SafeFileHandle handle = SpindleFile.OpenHandle(path);
            using var start = new ManualResetEventSlim();
            var readers = Enumerable.Range(0, 4).Select(_ => Task.Run(() =>
            {
                start.Wait();
                var buffer = new byte[4096];
                for (int i = 0; i < 200; i++)
                {
                    try
                    {
                        Assert.Equal(4096, SpindleRandomAccess.Read(handle, buffer, (i % 16) * 4096L));
                    }
                    catch (ObjectDisposedException)
                    {
                        return;
                    }
                }
            })).ToArray();
            start.Set();
            handle.Dispose();
            Assert.True(Task.WaitAll(readers, TimeSpan.FromSeconds(30)));
        }
    }
}
