using Microsoft.Win32.SafeHandles;
using Spindle.Engines;
using Spindle.Engines.IoUring;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Engines;

/// <summary>
/// Issue 11 findings 4, 5 and 10: no operation waits for a pool thread that user code blocked, and
/// operations that may wait for ever (idle pipes) never hold up the ones that cannot.
/// </summary>
public class StarvationTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    // Finding 4: 200 pool threads each block on their own read (sync-over-async) with the pool capped
    // at 24 threads. Reads queued behind the callers, or completions queued behind them, never run:
    // the process deadlocks (the probe's 40 s wait is only the detector). System.IO completes.
    [Theory]
    [InlineData("system")]
    [InlineData("ThreadPool")]
    [InlineData("IoUring")]
    public void Sync_over_async_reads_on_a_capped_pool_complete_like_System_IO(string engine)
    {
        Dictionary<string, string> result = ChildProcessSelectionTests.RunProbe(
            new Dictionary<string, string?>(), mode: null, arguments: ["sync-over-async", engine, "24"]);
        // A hung run prints the engine's state and where each thread waits (state.* lines): the message carries them.
        Assert.True(result["finished"] == "True", string.Join('\n', result.Select(line => $"{line.Key}={line.Value}")));
        Assert.Equal("200", result["correct"]);
        Assert.True(int.Parse(result["threads"]) <= 24);
    }

    // Finding 5: reads wait on an idle pipe — on io_uring more than its budget for such operations holds
    // (the old engine had room for 479), on the others 500 — and a plain file read must still complete,
    // on every engine, while the CQ ring never holds more than it can.
    [Theory]
    [MemberData(nameof(EngineCases.All), MemberType = typeof(EngineCases))]
    public async Task Idle_pipe_reads_never_starve_a_file_read(IoEngine engine)
    {
        EngineCases.ReportIoUring(engine);
        var ring = EngineSelector.Get(engine) as IoUringEngine;
        int idleReads = ring is null ? 500 : ring.Thread.BlockingBudget + 100;
        using var dir = new TempDirectory();
        using var fifo = new Fifo(dir.File("fifo"));
        string path = dir.File("data");
        byte[] data = new byte[4096];
        Random.Shared.NextBytes(data);
        File.WriteAllBytes(path, data);
        using SafeFileHandle file = File.OpenHandle(path, FileMode.Open, FileAccess.Read);

        var idle = new Task<int>[idleReads];
        for (int i = 0; i < idleReads; i++)
        {
            // Task.Run: on the old Sync engine the call itself blocked its thread for ever.
            idle[i] = Task.Run(() => SpindleRandomAccess.ReadAsync(fifo.Reader, new byte[1], 0, engine).AsTask());
        }
        try
        {
            byte[] buffer = new byte[4096];
            FileIoEngine served = EngineCases.Resolve(engine);
            // Without the page-cache fast path: the read must really go through the engine's queue.
            int read = await Task.Run(() => served.ReadAsync(file, buffer, 0, useFastPath: false, CancellationToken.None).AsTask()).WaitAsync(Timeout);
            Assert.Equal(data.Length, read);
            Assert.Equal(data, buffer);
            Assert.DoesNotContain(idle, t => t.IsCompleted);
        }
        finally
        {
            // Wake every idle read: one byte each (a synchronous write: an io_uring pipe write would
            // queue behind the reads beyond the budget).
            SpindleRandomAccess.Write(fifo.Writer, new byte[idleReads], 0);
        }
        int[] results = await Task.WhenAll(idle).WaitAsync(Timeout);
        Assert.All(results, n => Assert.Equal(1, n));
        if (ring is not null)
        {
            Assert.True(EngineCounts.Of(ring.Thread).MaxInFlight <= ring.Thread.CqEntries, $"{EngineCounts.Of(ring.Thread).MaxInFlight} SQEs in flight, CQ holds {ring.Thread.CqEntries}");
        }
    }

    // Finding 5: an operation still queued (not yet in the kernel) completes as cancelled at once.
    [Fact]
    public async Task Cancelling_a_queued_io_uring_operation_completes_it_at_once()
    {
        IoUringEngine? engine = PrivateEngine.Create();
        if (engine is null)
        {
            Console.WriteLine($"io_uring is not available ({IoUringEngine.UnavailableReason}): nothing is queued on a ring.");
            return;
        }
        using var dir = new TempDirectory();
        string path = dir.File("data");
        File.WriteAllBytes(path, new byte[4096]);
        using SafeFileHandle file = File.OpenHandle(path, FileMode.Open, FileAccess.Read);
        using var cts = new CancellationTokenSource();
        byte[] buffer = new byte[4096];
        Array.Fill(buffer, (byte)0xAA);

        using var overlapping = HeldFileRequest.Hold(); // a lone read would run on a pool thread
        EngineCounts.Of(engine.Thread).HoldPending = true; // the ring "has no room": the read stays queued
        ValueTask<int> read = engine.ReadAsync(file, buffer, 0, useFastPath: false, cts.Token);
        Task<int> task = read.AsTask();
        await Task.Delay(50);
        Assert.False(task.IsCompleted);
        cts.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => task.WaitAsync(Timeout));
        Assert.All(buffer, b => Assert.Equal(0xAA, b)); // never reached the kernel

        // The stale queue entry is skipped once the ring has room again, and the engine keeps working.
        EngineCounts.Of(engine.Thread).HoldPending = false;
        Assert.Equal(4096, await engine.ReadAsync(file, buffer, 0, useFastPath: false, CancellationToken.None).AsTask().WaitAsync(Timeout));
        Assert.All(buffer, b => Assert.Equal(0, b));
    }

    // Finding 10: on the Sync engine, a read of an empty pipe returns a pending task (it would block
    // the caller for ever), so reading and then writing on one thread works, as with System.IO.
    [Theory]
    [MemberData(nameof(EngineCases.All), MemberType = typeof(EngineCases))]
    public async Task Reading_an_empty_pipe_then_writing_it_on_one_thread_works(IoEngine engine)
    {
        EngineCases.ReportIoUring(engine);
        using var dir = new TempDirectory();
        using var fifo = new Fifo(dir.File("fifo"));
        byte[] buffer = new byte[8];
        byte[] payload = [1, 2, 3];

        Task<int> flow = Task.Run(async () =>
        {
            ValueTask<int> read = SpindleRandomAccess.ReadAsync(fifo.Reader, buffer, 0, engine);
            await SpindleRandomAccess.WriteAsync(fifo.Writer, payload, 0, engine);
            return await read;
        });
        Assert.Equal(payload.Length, await flow.WaitAsync(Timeout));
        Assert.Equal(payload, buffer[..payload.Length]);

        // System.IO, the same way (its RandomAccess refuses pipes in .NET 10; FileStream takes them).
        using var systemFifo = new Fifo(dir.File("fifo2"));
        using var reader = new FileStream(systemFifo.Reader, FileAccess.ReadWrite, 0);
        using var writer = new FileStream(systemFifo.Writer, FileAccess.Write, 0);
        Task<int> systemFlow = Task.Run(async () =>
        {
            ValueTask<int> read = reader.ReadAsync(buffer);
            await writer.WriteAsync(payload);
            return await read;
        });
        Assert.Equal(payload.Length, await systemFlow.WaitAsync(Timeout));
    }
}
