using Microsoft.Win32.SafeHandles;
using Spindle.Engines.ThreadPool;
using Spindle.Tests.Engines;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Reliability.Regressions;

/// <summary>
/// Idle reads on pipes with the engines that run blocking system calls: they wait without a thread each
/// and stay cancellable, as System.IO's queued reads do.
/// </summary>
[Collection(SerialCollection.Name)]
public class IdlePipeReadTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    [Theory]
    [InlineData(IoEngine.ThreadPool)]
    [InlineData(IoEngine.Sync)]
    public async Task Thousands_of_idle_pipe_reads_hold_no_thread_each_and_can_all_be_cancelled(IoEngine engine)
    {
        const int Reads = 2000;
        var (reader, writer) = TestLibc.CreatePipe();
        using (reader)
        using (writer)
        {
            int threadsBefore = Directory.GetDirectories("/proc/self/task").Length;
            using var cts = new CancellationTokenSource();
            var reads = new Task<int>[Reads];
            for (int i = 0; i < Reads; i++)
            {
                reads[i] = SpindleRandomAccess.ReadAsync(reader, new byte[16], 0, engine, cts.Token).AsTask();
            }
            await WaitUntil(() => ReadinessWaiter.Instance.WaitingCount >= Reads);
            int threadsWaiting = Directory.GetDirectories("/proc/self/task").Length;

            cts.Cancel();
            foreach (Task<int> read in reads)
            {
                await Assert.ThrowsAnyAsync<OperationCanceledException>(() => read.WaitAsync(Timeout));
            }
            Assert.InRange(threadsWaiting - threadsBefore, -1000, 50);

            // The pipe still works, and no cancelled read took bytes from it.
            Task<int> next = SpindleRandomAccess.ReadAsync(reader, new byte[16], 0, engine).AsTask();
            SpindleRandomAccess.Write(writer, new byte[] { 1, 2, 3 }, 0);
            Assert.Equal(3, await next.WaitAsync(Timeout));
        }
    }

    [Theory]
    [InlineData(IoEngine.ThreadPool)]
    [InlineData(IoEngine.Sync)]
    public async Task Reads_waiting_on_one_pipe_get_its_bytes_in_the_order_they_were_issued(IoEngine engine)
    {
        var (reader, writer) = TestLibc.CreatePipe();
        using (reader)
        using (writer)
        {
            var buffers = new byte[8][];
            var reads = new Task<int>[buffers.Length];
            for (int i = 0; i < reads.Length; i++)
            {
                buffers[i] = new byte[1];
                reads[i] = SpindleRandomAccess.ReadAsync(reader, buffers[i], 0, engine).AsTask();
            }
            for (byte b = 0; b < reads.Length; b++)
            {
                SpindleRandomAccess.Write(writer, new[] { b }, 0);
                Assert.Equal(1, await reads[b].WaitAsync(Timeout));
                Assert.Equal(b, buffers[b][0]);
            }
        }
    }

    [Fact]
    public async Task A_read_on_an_O_NONBLOCK_pipe_fails_at_once_as_System_IO()
    {
        var (reader, writer) = TestLibc.CreatePipe(nonBlocking: true);
        using (reader)
        using (writer)
        {
            // System.IO's read(2) meets EAGAIN at once; waiting for readiness would hang here instead.
            Exception? actual = await Record(() => SpindleRandomAccess.ReadAsync(reader, new byte[4], 0, IoEngine.ThreadPool).AsTask().WaitAsync(Timeout));
            Assert.IsAssignableFrom<IOException>(actual);
        }
    }

    private static async Task<Exception?> Record(Func<Task> action)
    {
        try
        {
            await action();
            return null;
        }
        catch (Exception e)
        {
            return e;
        }
    }

    private static async Task WaitUntil(Func<bool> condition)
    {
        var deadline = DateTime.UtcNow + Timeout;
        while (!condition())
        {
            Assert.True(DateTime.UtcNow < deadline, "the reads never reached the readiness waiter");
            await Task.Delay(10);
        }
    }
}
