using System.Reflection;
using System.Runtime.Versioning;
using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Portable;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Platforms;

/// <summary>
/// Off Linux Spindle passes every call to System.IO. On Linux the same code runs when forced
/// (<c>SPINDLE_PASS_THROUGH=1</c>, read once per process), so these tests run it in a child process; test.sh
/// also runs the differential suites a second time in that mode.
/// </summary>
public class PassThroughTests
{
    private static readonly Dictionary<string, string> s_forced = new() { [PassThrough.EnvironmentName] = "1" };

    [Fact]
    public void The_mode_is_off_on_Linux_unless_forced()
    {
        string? forced = Environment.GetEnvironmentVariable(PassThrough.EnvironmentName);
        Assert.Equal(forced is "1" or "true", PassThrough.Enabled);
    }

    [Fact]
    public void A_forced_child_does_its_IO_through_System_IO_and_refuses_the_Linux_only_extras()
    {
        (int code, string output) = ChildProcess.Run(typeof(PassThroughTests), nameof(ForcedChild), s_forced);
        Assert.True(code == 0, output);
        Assert.Contains("pass-through: on", output);
        Assert.Contains("spindle operations: 0", output);
        Assert.Contains("DirectIO handle: PlatformNotSupportedException", output);
        Assert.Contains("DirectIO stream: PlatformNotSupportedException", output);
        Assert.Contains("AtomicAppend handle: PlatformNotSupportedException", output);
        Assert.Contains("alignment: PlatformNotSupportedException", output);
        Assert.Contains("fallback direct: opened buffered, IsDirectIO False, fallbacks +1", output);
        Assert.Contains("engine IoUring: stream ThreadPool, fallbacks +2", output);
        Assert.Contains("default engine: ThreadPool, io_uring available: False", output);
        Assert.Contains("bytes agree: True", output);
        Assert.Contains("copies agree: True, progress 10000", output);
        Assert.Contains("copy over an existing file: IOException", output);
    }

    [Fact]
    public void Every_Linux_only_member_is_marked_for_the_platform_analyzer()
    {
        MemberInfo[] members =
        [
            typeof(SpindleFile).GetMethod(nameof(SpindleFile.GetDirectIOAlignment))!,
            typeof(SpindleFileOptions).GetProperty(nameof(SpindleFileOptions.DirectIO))!.SetMethod!,
            typeof(SpindleFileOptions).GetProperty(nameof(SpindleFileOptions.AtomicAppend))!.SetMethod!,
        ];
        foreach (MemberInfo member in members)
        {
            Assert.Equal("linux", member.GetCustomAttribute<SupportedOSPlatformAttribute>()?.PlatformName);
        }
    }

    public static int ForcedChild(string[] args)
    {
        Console.WriteLine($"pass-through: {(PassThrough.Enabled ? "on" : "off")}");
        string dir = Path.Combine(Path.GetTempPath(), "spindle-pass-" + Guid.NewGuid().ToString("N"));
        Directory.CreateDirectory(dir);
        try
        {
            string path = Path.Combine(dir, "data");
            long operationsBefore = SpindleTotals.Snapshot().Operations;
            byte[] data = new byte[10_000];
            new Random(7).NextBytes(data);
            using (SafeFileHandle handle = SpindleFile.OpenHandle(path, FileMode.CreateNew, FileAccess.ReadWrite))
            {
                SpindleRandomAccess.Write(handle, data.AsSpan(0, 6000), 0);
                SpindleRandomAccess.WriteAsync(handle, data.AsMemory(6000), 6000, IoEngine.Auto).AsTask().GetAwaiter().GetResult();
                SpindleRandomAccess.FlushToDisk(handle);
            }
            byte[] back = new byte[data.Length];
            using (var stream = new SpindleFileStream(path, FileMode.Open, FileAccess.Read))
            {
                stream.ReadExactly(back);
            }
            Console.WriteLine($"spindle operations: {SpindleTotals.Snapshot().Operations - operationsBefore}");
            Console.WriteLine($"bytes agree: {data.AsSpan().SequenceEqual(back) && File.ReadAllBytes(path).AsSpan().SequenceEqual(data)}");

            Console.WriteLine($"DirectIO handle: {Outcome(() => SpindleFile.OpenHandle(path, new SpindleFileOptions { Mode = FileMode.Open, DirectIO = true }).Dispose())}");
            Console.WriteLine($"DirectIO stream: {Outcome(() => new SpindleFileStream(path, new SpindleFileOptions { Mode = FileMode.Open, DirectIO = true }).Dispose())}");
            Console.WriteLine($"AtomicAppend handle: {Outcome(() => SpindleFile.OpenHandle(path, new SpindleFileOptions { Mode = FileMode.Open, Access = FileAccess.Write, AtomicAppend = true }).Dispose())}");
            using (SafeFileHandle handle = SpindleFile.OpenHandle(path))
            {
                Console.WriteLine($"alignment: {Outcome(() => SpindleFile.GetDirectIOAlignment(handle))}");
            }

            long fallbacks = SpindleTotals.Snapshot().Fallbacks;
            using (SafeFileHandle handle = SpindleFile.OpenHandle(path, new SpindleFileOptions { Mode = FileMode.Open, DirectIO = true, DirectIOFallback = true }))
            {
                Console.WriteLine($"fallback direct: opened buffered, IsDirectIO {SpindleFile.IsDirectIO(handle)}, fallbacks +{SpindleTotals.Snapshot().Fallbacks - fallbacks}");
            }

            fallbacks = SpindleTotals.Snapshot().Fallbacks;
            using (var stream = new SpindleFileStream(path, new SpindleFileOptions { Mode = FileMode.Open, Engine = IoEngine.IoUring, Options = FileOptions.Asynchronous }))
            {
                stream.ReadAsync(new byte[10], IoEngine.IoUring).GetAwaiter().GetResult();
                Console.WriteLine($"engine IoUring: stream {stream.Engine}, fallbacks +{SpindleTotals.Snapshot().Fallbacks - fallbacks}");
            }
            Console.WriteLine($"default engine: {SpindleRandomAccess.DefaultEngine}, io_uring available: {SpindleRandomAccess.IsIoUringAvailable}");
            string copy = Path.Combine(dir, "copy");
            SpindleFile.Copy(path, copy);
            long progress = -1;
            SpindleFile.CopyAsync(path, Path.Combine(dir, "copy2"), progress: new Progress(value => progress = value)).GetAwaiter().GetResult();
            Console.WriteLine($"copies agree: {File.ReadAllBytes(copy).AsSpan().SequenceEqual(data) && File.ReadAllBytes(Path.Combine(dir, "copy2")).AsSpan().SequenceEqual(data)}, progress {progress}");
            Console.WriteLine($"copy over an existing file: {Outcome(() => SpindleFile.Copy(path, copy))}");
            return 0;
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    // Reports on the calling thread (System.Progress would post to the thread pool).
    private sealed class Progress(Action<long> report) : IProgress<long>
    {
        public void Report(long value) => report(value);
    }

    private static string Outcome(Action action)
    {
        try
        {
            action();
            return "ok";
        }
        catch (Exception e)
        {
            return e.GetType().Name;
        }
    }
}

file static class StreamReadExtensions
{
    // The stream's ReadAsync and a SpindleRandomAccess read on the stream's handle with an explicit engine: two requests for io_uring.
    internal static async Task<int> ReadAsync(this SpindleFileStream stream, byte[] buffer, IoEngine engine)
    {
        int read = await stream.ReadAsync(buffer);
        return read + await SpindleRandomAccess.ReadAsync(stream.SafeFileHandle, buffer, 0, engine);
    }
}
