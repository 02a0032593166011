using Microsoft.Win32.SafeHandles;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Engines;

/// <summary>Cancellation before, during and after an operation, and that a buffer is left alone once its task completed.</summary>
public class EngineCancellationTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    [Theory]
    [MemberData(nameof(EngineCases.All), MemberType = typeof(EngineCases))]
    public async Task A_token_cancelled_before_the_call_gives_a_cancelled_task_at_once(IoEngine engine)
    {
        using var dir = new TempDirectory();
        string path = dir.File("f");
        File.WriteAllBytes(path, new byte[100]);
        using SafeFileHandle handle = SpindleFile.OpenHandle(path, FileMode.Open, FileAccess.ReadWrite);
        using var cts = new CancellationTokenSource();
        cts.Cancel();
        byte[] buffer = new byte[10];

        ValueTask<int> read = SpindleRandomAccess.ReadAsync(handle, buffer, 0, engine, cts.Token);
        ValueTask<long> scatter = SpindleRandomAccess.ReadAsync(handle, new Memory<byte>[] { buffer }, 0, engine, cts.Token);
        ValueTask write = SpindleRandomAccess.WriteAsync(handle, new byte[] { 1, 2, 3 }, 0, engine, cts.Token);
        ValueTask gather = SpindleRandomAccess.WriteAsync(handle, new ReadOnlyMemory<byte>[] { new byte[] { 1 } }, 0, engine, cts.Token);
        ValueTask flush = SpindleRandomAccess.FlushToDiskAsync(handle, engine, cts.Token);
        Assert.True(read.IsCanceled && scatter.IsCanceled && write.IsCanceled && gather.IsCanceled && flush.IsCanceled);
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await read);
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await write);

        // System.IO gives the same: a cancelled task, no I/O.
        using SafeFileHandle system = File.OpenHandle(path, FileMode.Open, FileAccess.ReadWrite);
        Assert.True(System.IO.RandomAccess.ReadAsync(system, buffer, 0, cts.Token).IsCanceled);
        Assert.Equal(new byte[100], File.ReadAllBytes(path));
    }

    [Fact]
    public async Task Cancelling_a_pending_io_uring_read_completes_it_and_the_kernel_never_writes_the_buffer()
    {
        EngineCases.ReportIoUring(IoEngine.IoUring);
        using var dir = new TempDirectory();
        using var fifo = new Fifo(dir.File("fifo"));
        byte[] buffer = new byte[64];
        Array.Fill(buffer, (byte)0xAA);
        using var cts = new CancellationTokenSource();

        // Nothing is in the pipe, so the read waits in the kernel (or in a pool thread on the fallback).
        ValueTask<int> read = SpindleRandomAccess.ReadAsync(fifo.Reader, buffer, 0, IoEngine.IoUring, cts.Token);
        await Task.Delay(100);
        Assert.False(read.IsCompleted);
        if (!SpindleRandomAccess.IsIoUringAvailable)
        {
            // A blocking read on a pool thread cannot be interrupted; let it finish instead.
            await SpindleRandomAccess.WriteAsync(fifo.Writer, new byte[] { 1 }, 0);
            Assert.Equal(1, await read.AsTask().WaitAsync(Timeout));
            return;
        }
        cts.Cancel();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(async () => await read.AsTask().WaitAsync(Timeout));

        // The kernel has let go of the buffer: bytes written now must not land in it.
        byte[] payload = [1, 2, 3, 4, 5];
        await SpindleRandomAccess.WriteAsync(fifo.Writer, payload, 0, IoEngine.IoUring).AsTask().WaitAsync(Timeout);
        await Task.Delay(200);
        Assert.All(buffer, b => Assert.Equal(0xAA, b));

        // And the bytes are still in the pipe for the next read.
        byte[] next = new byte[16];
        Assert.Equal(payload.Length, await SpindleRandomAccess.ReadAsync(fifo.Reader, next, 0, IoEngine.IoUring).AsTask().WaitAsync(Timeout));
        Assert.Equal(payload, next[..payload.Length]);
    }

    [Fact]
    public async Task Closing_the_handle_during_an_io_uring_read_keeps_the_descriptor_until_the_kernel_is_done()
    {
        EngineCases.ReportIoUring(IoEngine.IoUring);
        if (!SpindleRandomAccess.IsIoUringAvailable)
        {
            return;
        }
        using var dir = new TempDirectory();
        using var fifo = new Fifo(dir.File("fifo"));
        byte[] buffer = new byte[8];
        using var cts = new CancellationTokenSource();
        string descriptor = $"/proc/self/fd/{(int)fifo.Reader.DangerousGetHandle()}";
        string? target = File.ResolveLinkTarget(descriptor, returnFinalTarget: false)?.FullName;
        Assert.NotNull(target);
        ValueTask<int> read = SpindleRandomAccess.ReadAsync(fifo.Reader, buffer, 0, IoEngine.IoUring, cts.Token);
        await Task.Delay(50);
        fifo.Reader.Dispose();

        // The engine still holds a reference: the descriptor stays open (and cannot be reused) while the kernel reads.
        Assert.Equal(target, File.ResolveLinkTarget(descriptor, returnFinalTarget: false)?.FullName);
        await SpindleRandomAccess.WriteAsync(fifo.Writer, new byte[] { 9, 8, 7 }, 0);
        Assert.Equal(3, await read.AsTask().WaitAsync(Timeout));
        Assert.Equal(new byte[] { 9, 8, 7 }, buffer[..3]);

        // Once the operation completed, the last reference is gone and the descriptor is closed.
        Assert.NotEqual(target, TryTarget(descriptor));
    }

    [Theory]
    [MemberData(nameof(EngineCases.All), MemberType = typeof(EngineCases))]
    public async Task Cancelling_after_completion_changes_nothing_and_the_buffer_stays_ours(IoEngine engine)
    {
        using var dir = new TempDirectory();
        string path = dir.File("f");
        byte[] data = new byte[4096];
        new Random(7).NextBytes(data);
        File.WriteAllBytes(path, data);
        using SafeFileHandle handle = SpindleFile.OpenHandle(path, FileMode.Open, FileAccess.Read);
        using var cts = new CancellationTokenSource();
        byte[] buffer = new byte[4096];

        int read = await EngineCases.Resolve(engine).ReadAsync(handle, buffer, 0, useFastPath: false, cts.Token).AsTask().WaitAsync(Timeout);
        Assert.Equal(4096, read);
        Assert.Equal(data, buffer);
        cts.Cancel();
        Array.Fill(buffer, (byte)0x55);
        await Task.Delay(100);
        Assert.All(buffer, b => Assert.Equal(0x55, b));
    }

    [Theory]
    [MemberData(nameof(EngineCases.Async), MemberType = typeof(EngineCases))]
    public async Task Racing_cancellations_end_in_either_a_cancellation_or_the_right_bytes(IoEngine engine)
    {
        EngineCases.ReportIoUring(engine);
        using var dir = new TempDirectory();
        string path = dir.File("f");
        byte[] data = new byte[1 << 20];
        new Random(8).NextBytes(data);
        File.WriteAllBytes(path, data);
        using SafeFileHandle handle = SpindleFile.OpenHandle(path, FileMode.Open, FileAccess.Read);
        var random = new Random(9);
        int cancelled = 0;
        int completed = 0;
        for (int round = 0; round < 20; round++)
        {
            using var cts = new CancellationTokenSource();
            var buffers = new byte[100][];
            var tasks = new Task<int>[100];
            for (int i = 0; i < tasks.Length; i++)
            {
                buffers[i] = new byte[8192];
                tasks[i] = EngineCases.Resolve(engine).ReadAsync(handle, buffers[i], i * 8192L, useFastPath: false, cts.Token).AsTask();
            }
            if (random.Next(2) == 0)
            {
                await Task.Yield();
            }
            cts.Cancel();
            for (int i = 0; i < tasks.Length; i++)
            {
                try
                {
                    int n = await tasks[i].WaitAsync(Timeout);
                    Assert.Equal(8192, n);
                    Assert.True(data.AsSpan(i * 8192, 8192).SequenceEqual(buffers[i]));
                    completed++;
                }
                catch (OperationCanceledException)
                {
                    cancelled++;
                }
            }
        }
        Console.WriteLine($"{engine}: {completed} completed, {cancelled} cancelled");
        Assert.Equal(2000, completed + cancelled);
    }

    private static string? TryTarget(string descriptor)
    {
        try
        {
            return File.ResolveLinkTarget(descriptor, returnFinalTarget: false)?.FullName;
        }
        catch (IOException)
        {
            return null;
        }
    }
}
