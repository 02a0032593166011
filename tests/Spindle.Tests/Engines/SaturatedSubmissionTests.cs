using System.Diagnostics;
using Microsoft.Win32.SafeHandles;
using Spindle.Engines;
using Spindle.Engines.IoUring;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Engines;

/// <summary>
/// While continuations fill every core, a file request that others of its class precede in the kernel does not wake
/// the ring thread: it waits in its lane for their next completion (RingThread.CanWaitForNextCompletion). No request
/// may be left waiting when nothing is left in flight to wake the thread. (A test that set up that state exactly, with
/// continuations blocked on every pool thread, could not reach it reliably on a loaded machine; this one checks that
/// every read of a saturating load completes with the right bytes.)
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
        using (HeldFileRequest.Hold())
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

    private static void Spin(TimeSpan duration)
    {
        long until = Stopwatch.GetTimestamp() + (long)(duration.TotalSeconds * Stopwatch.Frequency);
        while (Stopwatch.GetTimestamp() < until)
        {
        }
    }
}
