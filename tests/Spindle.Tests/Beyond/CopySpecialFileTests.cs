using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Tests.Infrastructure;
using Xunit.Abstractions;
using static Spindle.Tests.Beyond.CopyTests;

namespace Spindle.Tests.Beyond;

/// <summary>
/// <see cref="SpindleFile.Copy"/> against <see cref="File.Copy(string, string, bool)"/> where a side is not a regular
/// file (a pipe, a FIFO, a character device) and where an overwrite fails: the same bytes delivered, the same
/// exception, the same mode left on the destination.
/// </summary>
public partial class CopySpecialFileTests(ITestOutputHelper output)
{
    [LibraryImport("libc", EntryPoint = "mknod", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static partial int MkNod(string path, int mode, ulong device);

    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);

    private static readonly string[] s_copiers = ["File.Copy", "SpindleFile.Copy", "SpindleFile.CopyAsync"];

    public static TheoryData<string> Copiers => new(s_copiers);

    private static Task Run(string copier, string source, string destination, bool overwrite) => copier switch
    {
        "File.Copy" => Task.Run(() => File.Copy(source, destination, overwrite)),
        "SpindleFile.Copy" => Task.Run(() => SpindleFile.Copy(source, destination, overwrite)),
        _ => SpindleFile.CopyAsync(source, destination, overwrite),
    };

    // The exception's type and errno (System.IO's messages name no path where Spindle's do), or "ok".
    private static async Task<string> OutcomeOf(Task copy)
    {
        try
        {
            await copy.WaitAsync(Timeout);
            return "ok";
        }
        catch (Exception e)
        {
            return $"{e.GetType().FullName} ({e.HResult}): {e.Message}";
        }
    }

    private static string Kind(string outcome) => outcome.Split(':')[0];

    // A FIFO (as `<(...)` gives) and an anonymous pipe reached through /proc/self/fd (as /dev/stdin is).
    [Theory]
    [InlineData("fifo")]
    [InlineData("/proc/self/fd")]
    public async Task Copy_from_a_pipe_copies_its_bytes_like_File_Copy(string kind)
    {
        using var dir = new TempDirectory();
        byte[] data = RandomBytes(300_000, 10);
        var outcomes = new List<string>();
        foreach (string copier in s_copiers)
        {
            string source;
            SafeFileHandle? writeEnd = null, readEnd = null;
            if (kind == "fifo")
            {
                source = dir.File("fifo-" + copier);
                TestLibc.CreateFifo(source);
            }
            else
            {
                (readEnd, writeEnd) = TestLibc.CreatePipe();
                source = $"/proc/self/fd/{readEnd.DangerousGetHandle()}";
            }
            Task writer = Task.Run(() =>
            {
                using SafeFileHandle handle = writeEnd ?? File.OpenHandle(source, FileMode.Open, FileAccess.Write);
                using var stream = new FileStream(handle, FileAccess.Write, 1);
                stream.Write(data);
            });
            string destination = dir.File("copy-" + copier);
            outcomes.Add(await OutcomeOf(Run(copier, source, destination, overwrite: false)));
            readEnd?.Dispose(); // a writer left without a reader fails (EPIPE) rather than waiting
            await OutcomeOf(writer);
            Assert.True(data.AsSpan().SequenceEqual(File.ReadAllBytes(destination)), $"{copier}: {outcomes[^1]}, {new FileInfo(destination).Length} bytes");
        }
        output.WriteLine(string.Join("\n", outcomes));
        Assert.All(outcomes, o => Assert.Equal("ok", o));
    }

    [Theory]
    [MemberData(nameof(Copiers))]
    public async Task Copy_to_a_character_device_like_dev_null_succeeds_like_File_Copy(string copier)
    {
        using var dir = new TempDirectory();
        string device = dir.File("null");
        // A private null device (1, 3), so that the copy's chmod and times touch no device of the system.
        if (MkNod(device, 0x2000 /* S_IFCHR */ | 0x1B6, (1UL << 8) | 3) != 0)
        {
            output.WriteLine($"SKIPPED: mknod failed, errno {Marshal.GetLastPInvokeError()} (needs root)");
            return;
        }
        File.WriteAllBytes(dir.File("source"), RandomBytes(200_000, 11));
        File.SetUnixFileMode(dir.File("source"), UnixFileMode.UserRead | UnixFileMode.UserWrite);
        string expected = await OutcomeOf(Task.Run(() => File.Copy(dir.File("source"), device, overwrite: true)));
        UnixFileMode modeAfterSystemIo = File.GetUnixFileMode(device);
        File.SetUnixFileMode(device, (UnixFileMode)0x1B6);

        string actual = await OutcomeOf(Run(copier, dir.File("source"), device, overwrite: true));

        Assert.Equal(("ok", "ok"), (expected, actual));
        Assert.Equal(modeAfterSystemIo, File.GetUnixFileMode(device));
    }

    // The destination (0600) is opened with O_TRUNC, then the copy fails for want of space: System.IO sets the
    // source's mode only after the data and the times, so a failed copy leaves the destination's own mode.
    [Theory]
    [MemberData(nameof(Copiers))]
    public async Task A_failed_overwrite_leaves_the_destinations_mode_like_File_Copy(string copier)
    {
        using TmpfsMount? disk = TmpfsMount.TryMount("1m", out string why);
        if (disk is null)
        {
            output.WriteLine($"SKIPPED: {why}");
            return;
        }
        using var dir = new TempDirectory();
        File.WriteAllBytes(dir.File("source"), RandomBytes(3 << 20, 13));
        File.SetUnixFileMode(dir.File("source"), (UnixFileMode)0x1A4 /* 0644 */);
        foreach (string name in new[] { "system", "spindle" })
        {
            File.WriteAllBytes(disk.File(name), [1, 2, 3]);
            File.SetUnixFileMode(disk.File(name), UnixFileMode.UserRead | UnixFileMode.UserWrite);
        }

        string expected = await OutcomeOf(Task.Run(() => File.Copy(dir.File("source"), disk.File("system"), overwrite: true)));
        string actual = await OutcomeOf(Run(copier, dir.File("source"), disk.File("spindle"), overwrite: true));
        output.WriteLine($"{expected}\n{actual}");

        Assert.StartsWith("System.IO.IOException (28)", expected);
        Assert.Equal(Kind(expected), Kind(actual));
        Assert.Equal(File.GetUnixFileMode(disk.File("system")), File.GetUnixFileMode(disk.File("spindle")));
    }
}
