using System.Diagnostics;
using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Engines;
using Spindle.Engines.IoUring;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Engines;

/// <summary>
/// While continuations fill every core, a file request that others of its class precede in the kernel does not wake
/// the ring thread: it waits in its lane for their next completion (RingThread.CanWaitForNextCompletion). No request
/// may be left waiting when nothing is left in flight to wake the thread.
/// </summary>
[Collection(SerialCollection.Name)] // the held request changes where every other test's lone requests run
public class SaturatedSubmissionTests
{
    private const int FileSize = 1 << 20;

    [Fact]
    public async Task Reads_from_continuations_that_fill_every_core_all_complete_with_the_files_bytes()
    {
        if (!SpindleRandomAccess.IsIoUringAvailable)
        {
            Console.WriteLine("io_uring is not available: nothing to check.");
            return;
        }
        using var directory = new TempDirectory();
        string path = directory.File("data");
        byte[] content = new byte[FileSize];
        new Random(7).NextBytes(content);
        File.WriteAllBytes(path, content);
        using SafeFileHandle handle = File.OpenHandle(path, FileMode.Open, FileAccess.Read);

        // Held: every read goes to the ring (router row 10), as when other requests are in flight.
        using (FileRequestsInFlight.Hold())
        {
            Task[] callers = new Task[Environment.ProcessorCount * 4];
            for (int c = 0; c < callers.Length; c++)
            {
                int seed = c;
                callers[c] = Task.Run(async () =>
                {
                    var random = new Random(seed);
                    byte[] buffer = new byte[4096];
                    for (int i = 0; i < 200; i++)
                    {
                        int offset = random.Next(FileSize / 4096) * 4096;
                        int read = await IoUringEngine.Instance!.ReadAsync(handle, buffer, offset, useFastPath: false, CancellationToken.None);
                        Assert.Equal(4096, read);
                        Assert.True(buffer.AsSpan().SequenceEqual(content.AsSpan(offset, 4096)));
                        Spin(TimeSpan.FromMicroseconds(50)); // work after the read: the continuations keep every core busy
                    }
                });
            }
            await Task.WhenAll(callers).WaitAsync(TimeSpan.FromMinutes(2));
        }
    }

    [Fact]
    public async Task A_read_submitted_while_continuations_fill_every_core_and_nothing_is_in_flight_wakes_the_ring_thread()
    {
        if (!SpindleRandomAccess.IsIoUringAvailable)
        {
            Console.WriteLine("io_uring is not available: nothing to check.");
            return;
        }
        IoUringEngine engine = IoUringEngine.Instance!;
        using var directory = new TempDirectory();
        string path = directory.File("data");
        File.WriteAllBytes(path, new byte[8192]);
        using SafeFileHandle handle = File.OpenHandle(path, FileMode.Open, FileAccess.Read);
        using var gate = new ManualResetEventSlim();
        var blocked = new List<Task>();
        using (FileRequestsInFlight.Hold())
        {
            try
            {
                // Continuations that block fill every core, as far as the ring thread can tell.
                for (int i = 0; i < Environment.ProcessorCount; i++)
                {
                    blocked.Add(BlockAfter(engine.ReadAsync(handle, new byte[4096], 0, useFastPath: false, CancellationToken.None), gate));
                }
                await Until(() => engine.Thread.Continuations.Running >= Environment.ProcessorCount);
                await Until(() => engine.Thread.IsSleeping);

                // Nothing of its class is in the kernel: no completion would wake the thread, so this request must.
                Task<int> read = engine.ReadAsync(handle, new byte[4096], 4096, useFastPath: false, CancellationToken.None).AsTask();
                Assert.Same(read, await Task.WhenAny(read, Task.Delay(TimeSpan.FromSeconds(30))));
                Assert.Equal(4096, await read);
            }
            finally
            {
                gate.Set();
                await Task.WhenAll(blocked);
            }
        }
    }

    private static Task BlockAfter(ValueTask<int> pending, ManualResetEventSlim gate)
    {
        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        ConfiguredValueTaskAwaitable<int>.ConfiguredValueTaskAwaiter awaiter = pending.ConfigureAwait(false).GetAwaiter();
        awaiter.UnsafeOnCompleted(() =>
        {
            awaiter.GetResult();
            gate.Wait(); // the continuation holds its thread until the test lets go
            done.SetResult();
        });
        return done.Task;
    }

    private static async Task Until(Func<bool> condition)
    {
        var waited = Stopwatch.StartNew();
        while (!condition())
        {
            Assert.True(waited.Elapsed < TimeSpan.FromSeconds(30), "the state the test needs never came");
            await Task.Delay(1);
        }
    }

    private static void Spin(TimeSpan duration)
    {
        long until = Stopwatch.GetTimestamp() + (long)(duration.TotalSeconds * Stopwatch.Frequency);
        while (Stopwatch.GetTimestamp() < until)
        {
        }
    }
}
