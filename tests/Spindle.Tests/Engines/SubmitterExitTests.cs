using Microsoft.Win32.SafeHandles;
using Spindle.Engines.IoUring;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Engines;

/// <summary>
/// io_uring ties a request to the thread that submitted it: a request the kernel must issue again later (an uncached
/// buffered read once its page is in, a pipe read once data arrives) is issued on that thread, and fails with EFAULT
/// or ECANCELED when the thread has exited. Any thread may start a Spindle operation and exit before it completes (a
/// thread of its own that fires a read and ends, a pool thread that retires); the operation must still complete with
/// what the file or pipe holds, as System.IO's would.
/// </summary>
public class SubmitterExitTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    [Fact]
    public void A_pipe_read_started_on_a_thread_that_exited_gets_the_bytes_written_after()
    {
        if (PrivateEngine.Create() is not IoUringEngine engine)
        {
            Console.WriteLine($"io_uring is not available ({IoUringEngine.UnavailableReason}): no ring to submit to.");
            return;
        }
        using var dir = new TempDirectory();
        using var fifo = new Fifo(dir.File("fifo"));
        byte[] buffer = new byte[4];
        // The thread submits the read (the pipe is empty: the kernel waits for data on its behalf) and exits before
        // anything is written, so the kernel's second attempt finds its thread gone.
        ValueTask<int> read = StartOnThreadThatExits(() => engine.ReadAsync(fifo.Reader, buffer, 0, useFastPath: false, CancellationToken.None));
        Assert.False(read.IsCompleted);
        SpindleRandomAccess.Write(fifo.Writer, new byte[] { 1, 2, 3, 4 }, 0);

        Task<int> result = read.AsTask();
        Assert.True(result.Wait(Timeout), "the read never completed");
        Assert.Equal(4, result.Result);
        Assert.Equal(new byte[] { 1, 2, 3, 4 }, buffer);
    }

    [Fact]
    public void Uncached_buffered_reads_started_on_threads_that_exit_read_the_file()
    {
        if (PrivateEngine.Create() is not IoUringEngine engine)
        {
            Console.WriteLine($"io_uring is not available ({IoUringEngine.UnavailableReason}): no ring to submit to.");
            return;
        }
        const int Rounds = 16;
        const int Reads = 16;
        const int Block = 4096;
        const long Stride = 1024 * 1024; // apart, so that one read's readahead does not bring in the next one's page
        using var dir = new TempDirectory();
        string path = dir.File("data");
        byte[] content = new byte[Reads * Stride];
        new Random(7).NextBytes(content);
        using (var writer = new FileStream(path, FileMode.CreateNew))
        {
            writer.Write(content);
            writer.Flush(flushToDisk: true); // clean pages: the advice below drops them
        }
        using SafeFileHandle handle = File.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.Read, FileOptions.Asynchronous);
        if (new DriveInfo(path).DriveFormat is "tmpfs" or "ramfs")
        {
            Console.WriteLine("The temporary directory is in memory: its reads are copies, never issued again by the kernel.");
            return;
        }
        var buffers = new byte[Reads][];
        var reads = new ValueTask<int>[Reads];
        for (int round = 0; round < Rounds; round++)
        {
            // Dropped from the page cache: each read misses, and the ring issues it again once its page is in. The first
            // read of a round goes in from its own thread (nothing else is in flight to carry it).
            Assert.Equal(0, TestLibc.PosixFAdvise((int)handle.DangerousGetHandle(), 0, 0, TestLibc.POSIX_FADV_DONTNEED));
            for (int i = 0; i < Reads; i++)
            {
                int index = i;
                long offset = index * Stride + round * Block;
                buffers[index] = new byte[Block];
                reads[index] = StartOnThreadThatExits(() => engine.ReadAsync(handle, buffers[index], offset, useFastPath: true, CancellationToken.None));
            }
            for (int i = 0; i < Reads; i++)
            {
                Task<int> read = reads[i].AsTask();
                Assert.True(read.Wait(Timeout), $"read {i} of round {round} never completed");
                Assert.Equal(Block, read.Result); // a read that failed throws here (io_uring's EFAULT: "Bad address")
                Assert.True(content.AsSpan((int)(i * Stride + round * Block), Block).SequenceEqual(buffers[i]), $"read {i} of round {round} returned other bytes");
            }
        }
    }

    // Starts an operation on a new thread and returns once that thread has ended.
    private static ValueTask<int> StartOnThreadThatExits(Func<ValueTask<int>> start)
    {
        ValueTask<int> started = default;
        var thread = new Thread(() => started = start());
        thread.Start();
        Assert.True(thread.Join(Timeout), "the submitting thread never ended");
        return started;
    }
}
