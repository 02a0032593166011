using Microsoft.Win32.SafeHandles;
using Spindle.Tests.Beyond;
using Spindle.Tests.Infrastructure;
using Xunit.Abstractions;
using static Spindle.Tests.Reliability.ReliabilityKit;

namespace Spindle.Tests.Reliability.Regressions;

/// <summary>Issue 11's stream-layer findings 3, 8, 9b and 9c, each against System.IO where it has a counterpart.</summary>
[Collection(SerialReliability.Name)]
public class StreamLayerRegressionTests(ITestOutputHelper output)
{
    /// <summary>
    /// Finding 3: records buffered by an atomic-append stream survive a flush that fails with ENOSPC (one page
    /// free, so the first write(2) is short and the second fails) and are written, once, when space is back:
    /// by the next Flush, or by Dispose. FileStream in Append mode keeps them too.
    /// </summary>
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public Task Atomic_append_keeps_records_a_full_disk_refused_and_writes_them_once_when_space_is_back(bool byDispose) => Bounded(() =>
    {
        using TmpfsMount? disk = TmpfsMount.TryMount("1m", out string why);
        if (disk is null)
        {
            output.WriteLine($"SKIPPED: {why}");
            return Task.CompletedTask;
        }
        byte[] records = Pattern(10_000, 3);
        var system = new FileStream(disk.File("system"), FileMode.Append, FileAccess.Write, FileShare.ReadWrite, 64 * 1024);
        var spindle = new SpindleFileStream(disk.File("spindle"), new SpindleFileOptions
        {
            Mode = FileMode.OpenOrCreate, Access = FileAccess.Write, Share = FileShare.ReadWrite, BufferSize = 64 * 1024, AtomicAppend = true,
        });
        system.Write(records);
        spindle.Write(records);

        foreach (Stream stream in new Stream[] { system, spindle })
        {
            // Exactly one page free: the flush's write(2) is short, then the rest fails with ENOSPC.
            File.WriteAllBytes(disk.File("reserve"), new byte[4096]);
            FillUp(disk.File("filler"));
            File.Delete(disk.File("reserve"));
            IOException full = Assert.ThrowsAny<IOException>(() => stream.Flush());
            Assert.Equal(28, full.HResult);
            File.Delete(disk.File("filler"));
        }
        foreach (Stream stream in new Stream[] { system, spindle })
        {
            if (byDispose)
            {
                stream.Dispose();
            }
            else
            {
                stream.Flush();
                stream.Dispose();
            }
        }
        Assert.Equal(records, File.ReadAllBytes(disk.File("system")));
        Assert.Equal(records, File.ReadAllBytes(disk.File("spindle")));
        return Task.CompletedTask;
    });

    private static void FillUp(string path)
    {
        using var filler = new FileStream(path, FileMode.Create, FileAccess.Write, FileShare.None, 0);
        byte[] chunk = new byte[4096];
        try
        {
            while (true)
            {
                filler.Write(chunk);
            }
        }
        catch (IOException)
        {
        }
    }

    private sealed class SystemRecorder(string path) : FileStream(path, FileMode.Create, FileAccess.ReadWrite, FileShare.ReadWrite, 4096)
    {
        public List<bool> Flushes { get; } = [];

        public override void Flush(bool flushToDisk)
        {
            Flushes.Add(flushToDisk);
            base.Flush(flushToDisk);
        }
    }

    private sealed class SpindleRecorder(string path, SpindleFileOptions options) : SpindleFileStream(path, options)
    {
        public List<bool> Flushes { get; } = [];

        public override void Flush(bool flushToDisk)
        {
            Flushes.Add(flushToDisk);
            base.Flush(flushToDisk);
        }
    }

    /// <summary>Finding 8: a derived stream's SafeFileHandle goes through its Flush(bool) override, and throws once disposed.</summary>
    [Theory]
    [InlineData("buffered")]
    [InlineData("unbuffered")]
    [InlineData("direct")]
    [InlineData("append")]
    public void A_derived_streams_SafeFileHandle_calls_its_Flush_override_and_throws_after_Dispose_like_FileStream(string kind)
    {
        using var dir = DirectIOTests.DiskDirectory();
        var system = new SystemRecorder(dir.File("system"));
        var spindle = new SpindleRecorder(dir.File("spindle"), new SpindleFileOptions
        {
            Mode = FileMode.Create, Access = FileAccess.ReadWrite, Share = FileShare.ReadWrite,
            BufferSize = kind == "unbuffered" ? 0 : 4096, DirectIO = kind == "direct", AtomicAppend = kind == "append",
        });
        system.Write("abc"u8);
        spindle.Write("abc"u8);
        SafeFileHandle systemHandle = system.SafeFileHandle;
        SafeFileHandle spindleHandle = spindle.SafeFileHandle;
        Assert.False(spindleHandle.IsClosed);
        Assert.Equal(system.Flushes, spindle.Flushes);
        Assert.Equal(3, File.ReadAllBytes(dir.File("spindle")).Length); // the handle's user sees the buffered bytes

        system.Dispose();
        spindle.Dispose();
        Exception? systemError = Record.Exception(() => system.SafeFileHandle);
        Exception? spindleError = Record.Exception(() => spindle.SafeFileHandle);
        Assert.Equal(systemError?.GetType(), spindleError?.GetType());
        Assert.IsType<ObjectDisposedException>(spindleError);
        Assert.Equal(system.Flushes, spindle.Flushes);
    }

    /// <summary>Finding 9b: CopyTo after another handle truncated the source writes the read-ahead first, as FileStream does.</summary>
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task CopyTo_after_the_source_was_truncated_elsewhere_writes_the_read_ahead_like_FileStream(bool async)
    {
        using var dir = new TempDirectory();
        byte[] content = Pattern(20_000, 9);
        File.WriteAllBytes(dir.File("source-system"), content);
        File.WriteAllBytes(dir.File("source-spindle"), content);
        long[] copied = new long[2];
        for (int side = 0; side < 2; side++)
        {
            string source = dir.File(side == 0 ? "source-system" : "source-spindle");
            string target = dir.File(side == 0 ? "target-system" : "target-spindle");
            using Stream reader = side == 0
                ? new FileStream(source, FileMode.Open, FileAccess.Read, FileShare.ReadWrite, 4096)
                : new SpindleFileStream(source, FileMode.Open, FileAccess.Read, FileShare.ReadWrite, 4096);
            using var destination = new FileStream(target, FileMode.Create, FileAccess.Write);
            Assert.Equal(10, reader.Read(new byte[10])); // the buffer now holds 4,086 more bytes
            using (var other = new FileStream(source, FileMode.Open, FileAccess.Write, FileShare.ReadWrite))
            {
                other.SetLength(0);
            }
            if (async)
            {
                await reader.CopyToAsync(destination);
            }
            else
            {
                reader.CopyTo(destination);
            }
            copied[side] = destination.Length;
        }
        Assert.Equal(4086, copied[0]);
        Assert.Equal(copied[0], copied[1]);
        Assert.Equal(File.ReadAllBytes(dir.File("target-system")), File.ReadAllBytes(dir.File("target-spindle")));
    }

    /// <summary>
    /// Finding 9c: two threads starting the first asynchronous operations of one direct stream at once. A lazily
    /// created lock that is not created atomically gives each its own semaphore, and a release then fails
    /// (SemaphoreFullException); a correct layer serialises them and both succeed.
    /// </summary>
    [Theory]
    [InlineData(IoEngine.ThreadPool)] // the race is in the layer, not the engine: one engine is enough (about 1 failure in 300 trials on main)
    public Task Two_threads_starting_a_direct_streams_first_async_operations_get_no_SemaphoreFullException(IoEngine engine) => Bounded(seconds: 600, body: async () =>
    {
        using var dir = DirectIOTests.DiskDirectory();
        string path = dir.File("f");
        File.WriteAllBytes(path, Pattern(256 * 1024, 4));
        var failures = new List<Exception>();
        const int Trials = 2000;
        for (int trial = 0; trial < Trials; trial++)
        {
            await using var stream = new SpindleFileStream(path, new SpindleFileOptions
            {
                Mode = FileMode.Open, Access = FileAccess.Read, Options = FileOptions.Asynchronous, DirectIO = true, Engine = engine,
            });
            // Both threads spin on one flag, so that their first calls start within nanoseconds of each other.
            int go = 0, ready = 0;
            Task<Task<int>>[] starters = [.. Enumerable.Range(0, 2).Select(_ => Task.Factory.StartNew(() =>
            {
                Interlocked.Increment(ref ready);
                while (Volatile.Read(ref go) == 0)
                {
                }
                return stream.ReadAsync(new byte[100]).AsTask();
            }, CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default))];
            SpinWait.SpinUntil(() => Volatile.Read(ref ready) == 2);
            Volatile.Write(ref go, 1);
            foreach (Task<Task<int>> starter in starters)
            {
                try
                {
                    await await starter;
                }
                catch (Exception e)
                {
                    failures.Add(e);
                }
            }
        }
        output.WriteLine($"{engine}: {failures.Count} failures in {Trials} trials: {string.Join(", ", failures.Select(f => f.GetType().Name).Distinct())}");
        Assert.Empty(failures);
    });
}
