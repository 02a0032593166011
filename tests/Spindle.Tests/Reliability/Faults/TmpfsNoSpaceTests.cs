using System.Diagnostics;
using Microsoft.Win32.SafeHandles;
using Spindle.Tests.Infrastructure;
using Xunit.Abstractions;
using static Spindle.Tests.Reliability.ReliabilityKit;

namespace Spindle.Tests.Reliability.Faults;

/// <summary>A real full disk: a 1 MiB tmpfs mounted for the test.</summary>
[Collection(SerialReliability.Name)]
public class TmpfsNoSpaceTests(ITestOutputHelper output)
{
    [Theory]
    [MemberData(nameof(WayData), MemberType = typeof(ReliabilityKit))]
    public Task A_full_disk_fails_the_write_with_IOException_and_keeps_every_acknowledged_byte(string way) => Bounded(async () =>
    {
        IoEngine? engine = ParseWay(way);
        using var dir = new TempDirectory();
        if (!Mount(dir.Path, out string why))
        {
            output.WriteLine($"skipped: mounting a tmpfs was refused ({why})");
            return;
        }
        try
        {
            int descriptors = OpenDescriptors();
            byte[] chunk = Pattern(64 * 1024 + 100, 5);
            long acknowledged = 0;
            IOException? full = null;
            using (SafeFileHandle handle = SpindleFile.OpenHandle(dir.File("f"), FileMode.CreateNew, FileAccess.ReadWrite))
            {
                for (int i = 0; i < 64 && full is null; i++)
                {
                    try
                    {
                        if (i % 2 == 0)
                        {
                            await WriteAsyncOrSync(handle, chunk, acknowledged, engine);
                        }
                        else
                        {
                            await WriteGatherAsyncOrSync(handle, [chunk.AsMemory(0, 100), chunk.AsMemory(100)], acknowledged, engine);
                        }
                        acknowledged += chunk.Length;
                    }
                    catch (IOException e)
                    {
                        full = e;
                    }
                }
                Assert.NotNull(full);
                Assert.Equal(28, full.HResult); // ENOSPC, as System.IO reports it

                // Every acknowledged write reads back intact through Spindle itself.
                var read = new byte[chunk.Length];
                for (long at = 0; at < acknowledged; at += chunk.Length)
                {
                    Assert.Equal(chunk.Length, await ReadAsyncOrSync(handle, read, at, engine));
                    Assert.Equal(chunk, read);
                }
            }
            AssertNoDescriptorLeak(descriptors);
            output.WriteLine($"{way}: {acknowledged} bytes acknowledged before ENOSPC: {full.Message}");
        }
        finally
        {
            Unmount(dir.Path);
        }
    });

    internal static bool Mount(string path, out string why) => Run("mount", $"-t tmpfs -o size=1m tmpfs {path}", out why);

    internal static void Unmount(string path) => Run("umount", path, out _);

    private static bool Run(string program, string arguments, out string why)
    {
        try
        {
            using Process process = Process.Start(new ProcessStartInfo(program, arguments) { RedirectStandardError = true, RedirectStandardOutput = true })!;
            why = process.StandardError.ReadToEnd();
            process.WaitForExit();
            return process.ExitCode == 0;
        }
        catch (Exception e)
        {
            why = e.Message;
            return false;
        }
    }
}
