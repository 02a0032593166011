using System.Runtime.Versioning;
using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Tests.Infrastructure;
using Xunit.Abstractions;

namespace Spindle.Tests.Reliability.Faults;

/// <summary>
/// io_uring forbidden: by the kernel (<c>kernel.io_uring_disabled=2</c>, set for one child process and
/// restored) and by the seam (io_uring_setup made to fail). Either way Spindle falls back to the thread
/// pool, says so, and every engine still reads and writes the right bytes. The engine is chosen once per
/// process, so both run in a child process.
/// </summary>
[Collection(SerialReliability.Name)]
public class IoUringRefusedTests(ITestOutputHelper output)
{
    private const string Sysctl = "/proc/sys/kernel/io_uring_disabled";

    [Fact]
    public async Task With_io_uring_disabled_by_the_kernel_Spindle_falls_back_to_the_thread_pool()
    {
        string? original = TryRead(Sysctl);
        if (original is null)
        {
            output.WriteLine($"skipped: {Sysctl} does not exist on this kernel");
            return;
        }
        try
        {
            try
            {
                File.WriteAllText(Sysctl, "2");
            }
            catch (Exception e) when (e is UnauthorizedAccessException or IOException)
            {
                output.WriteLine($"skipped: setting kernel.io_uring_disabled=2 was refused ({e.Message})");
                return;
            }
            (int code, string text) = await Task.Run(() => ChildProcess.Run(typeof(IoUringRefusedTests), nameof(ChildChecksFallback))).WaitAsync(TimeSpan.FromSeconds(90));
            output.WriteLine(text);
            Assert.True(code == 0, text);
            Assert.Contains("default engine: ThreadPool", text);
            Assert.Contains("io_uring available: False", text);
        }
        finally
        {
            // Restore at once: io_uring is a machine-wide setting.
            File.WriteAllText(Sysctl, original.Trim());
        }
        Assert.Equal(original.Trim(), TryRead(Sysctl)?.Trim());
    }

    [Fact]
    public async Task With_io_uring_setup_refused_at_the_seam_Spindle_falls_back_to_the_thread_pool()
    {
        (int code, string text) = await Task.Run(() => ChildProcess.Run(typeof(IoUringRefusedTests), nameof(ChildRefusesRingThenChecksFallback))).WaitAsync(TimeSpan.FromSeconds(90));
        output.WriteLine(text);
        Assert.True(code == 0, text);
        Assert.Contains("default engine: ThreadPool", text);
        Assert.Contains("io_uring available: False", text);
    }

    /// <summary>Child: refuses io_uring_setup at the seam before anything touches an engine, then checks the fallback.</summary>
    public static int ChildRefusesRingThenChecksFallback(string[] args)
    {
        SyscallFaults.RefuseRingSetup();
        return ChildChecksFallback(args);
    }

    /// <summary>Child: reports the engine, then writes and reads through every engine value and checks the bytes.</summary>
    public static int ChildChecksFallback(string[] args)
    {
        Console.WriteLine($"default engine: {SpindleRandomAccess.DefaultEngine}");
        Console.WriteLine($"io_uring available: {SpindleRandomAccess.IsIoUringAvailable}");
        using var dir = new TempDirectory();
        byte[] data = ReliabilityKit.Pattern(3 * 4096 + 7, 21);
        foreach (IoEngine engine in Enum.GetValues<IoEngine>())
        {
            string path = dir.File(engine.ToString());
            using (SafeFileHandle handle = SpindleFile.OpenHandle(path, FileMode.Create, FileAccess.ReadWrite, FileShare.None, FileOptions.Asynchronous))
            {
                SpindleRandomAccess.WriteAsync(handle, data, 0, engine).AsTask().Wait(TimeSpan.FromSeconds(30));
                var read = new byte[data.Length];
                int n = SpindleRandomAccess.ReadAsync(handle, read, 0, engine).AsTask().Result;
                if (n != data.Length || !read.AsSpan().SequenceEqual(data))
                {
                    Console.WriteLine($"{engine}: wrong bytes read back");
                    return 1;
                }
            }
            if (!File.ReadAllBytes(path).AsSpan().SequenceEqual(data))
            {
                Console.WriteLine($"{engine}: wrong bytes on disk");
                return 2;
            }
            using var stream = new SpindleFileStream(path, new SpindleFileOptions { Mode = FileMode.Open, Access = FileAccess.Read, Engine = engine, Options = FileOptions.Asynchronous });
            Console.WriteLine($"{engine}: ok, a stream asking for it runs on {stream.Engine}");
        }
        return 0;
    }

    private static string? TryRead(string path)
    {
        try
        {
            return File.ReadAllText(path);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }
}
