using Microsoft.Win32.SafeHandles;

namespace Spindle.Tests.Reliability;

/// <summary>
/// Tests that count the process's descriptors or change process-wide settings run alone: xunit runs
/// this collection after the parallel ones, one test at a time.
/// </summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class SerialReliability
{
    public const string Name = "Reliability (serial)";
}

/// <summary>Shared pieces of the reliability suite.</summary>
public static class ReliabilityKit
{
    /// <summary>
    /// Every way to run a random-access operation: null is the synchronous API, each engine value its
    /// asynchronous overload on that engine.
    /// </summary>
    public static readonly IoEngine?[] Ways = [null, .. Enum.GetValues<IoEngine>().Select(e => (IoEngine?)e)];

    public static IEnumerable<object?[]> WayData => Ways.Select(w => new object?[] { w?.ToString() ?? "sync" });

    public static IoEngine? ParseWay(string way) => way == "sync" ? null : Enum.Parse<IoEngine>(way);

    /// <summary>Runs a test body on the pool and fails it if it takes longer than the limit: no test may hang.</summary>
    public static async Task Bounded(Func<Task> body, int seconds = 60)
    {
        try
        {
            await Task.Run(body).WaitAsync(TimeSpan.FromSeconds(seconds));
        }
        catch (TimeoutException)
        {
            Assert.Fail($"the test did not finish within {seconds} s (a hang)");
        }
    }

    /// <summary>
    /// Waits until <paramref name="condition"/> holds or <paramref name="milliseconds"/> pass, without holding a thread
    /// meanwhile. Spinning a pool thread here (<c>SpinWait.SpinUntil</c>) took a thread from the very operations it waited
    /// for: their turns and continuations run on pool threads, so with the pool short of threads (the whole suite
    /// running) a round waited out its full limit before it went on.
    /// </summary>
    public static async Task UntilAsync(Func<bool> condition, int milliseconds)
    {
        long end = Environment.TickCount64 + milliseconds;
        while (!condition() && Environment.TickCount64 < end)
        {
            await Task.Delay(1);
        }
    }

    /// <summary>
    /// The number of open descriptors of this process, after one operation on every way has run, so
    /// that descriptors the runtime opens lazily once (libraries, an engine's ring) are not counted as leaks.
    /// </summary>
    public static int OpenDescriptors()
    {
        s_warmUp.Value.GetAwaiter().GetResult();
        return Directory.GetFileSystemEntries("/proc/self/fd").Length;
    }

    /// <summary>Fails when the process has more descriptors than <paramref name="before"/>, after finalizers had their chance.</summary>
    public static void AssertNoDescriptorLeak(int before)
    {
        int now = OpenDescriptors();
        for (int i = 0; i < 20 && now > before; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
            Thread.Sleep(20);
            now = OpenDescriptors();
        }
        Assert.True(now <= before, $"descriptor leak: {before} open before, {now} after");
    }

    private static readonly Lazy<Task> s_warmUp = new(async () =>
    {
        string path = Path.Combine(Path.GetTempPath(), "spindle-warmup-" + Guid.NewGuid().ToString("N"));
        using (SafeFileHandle handle = SpindleFile.OpenHandle(path, FileMode.CreateNew, FileAccess.ReadWrite, FileShare.Read, FileOptions.DeleteOnClose))
        {
            foreach (IoEngine? way in Ways)
            {
                await WriteAsyncOrSync(handle, new byte[1], 0, way);
                await ReadAsyncOrSync(handle, new byte[1], 0, way);
            }
        }
    });

    public static int Fd(SafeFileHandle handle) => (int)handle.DangerousGetHandle();

    public static byte[] Pattern(int length, int seed)
    {
        var bytes = new byte[length];
        new Random(seed).NextBytes(bytes);
        return bytes;
    }

    public static async Task<int> ReadAsyncOrSync(SafeFileHandle handle, Memory<byte> buffer, long offset, IoEngine? way) =>
        way is { } engine ? await SpindleRandomAccess.ReadAsync(handle, buffer, offset, engine) : SpindleRandomAccess.Read(handle, buffer.Span, offset);

    public static async Task WriteAsyncOrSync(SafeFileHandle handle, ReadOnlyMemory<byte> buffer, long offset, IoEngine? way)
    {
        if (way is { } engine)
        {
            await SpindleRandomAccess.WriteAsync(handle, buffer, offset, engine);
        }
        else
        {
            SpindleRandomAccess.Write(handle, buffer.Span, offset);
        }
    }

    public static async Task<long> ReadScatterAsyncOrSync(SafeFileHandle handle, IReadOnlyList<Memory<byte>> buffers, long offset, IoEngine? way) =>
        way is { } engine ? await SpindleRandomAccess.ReadAsync(handle, buffers, offset, engine) : SpindleRandomAccess.Read(handle, buffers, offset);

    public static async Task WriteGatherAsyncOrSync(SafeFileHandle handle, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long offset, IoEngine? way)
    {
        if (way is { } engine)
        {
            await SpindleRandomAccess.WriteAsync(handle, buffers, offset, engine);
        }
        else
        {
            SpindleRandomAccess.Write(handle, buffers, offset);
        }
    }
}
