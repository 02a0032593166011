using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Engines;
using Spindle.Engines.FastPath;
using Spindle.Engines.IoUring;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Engines;

/// <summary>
/// The router's rows for file systems io_uring can only serve through its kernel workers, on real mounts: buffered
/// files on tmpfs (row 3: a system call on the caller's thread, the copy it is) and files on FUSE (row 9: pool
/// threads, as System.IO, even while other requests overlap). Each compares the bytes with System.IO's.
/// </summary>
[Collection(SerialCollection.Name)]
public partial class FileSystemRoutingTests
{
    private const int EOPNOTSUPP = 95;
    private const int RWF_NOWAIT = 0x8;

    [LibraryImport("libc", EntryPoint = "preadv2", SetLastError = true)]
    private static unsafe partial nint PReadV2(int fd, Iovec* vectors, int count, long offset, int flags);

    [StructLayout(LayoutKind.Sequential)]
    private unsafe struct Iovec
    {
        public byte* Base;
        public nuint Length;
    }

    [Fact]
    public async Task Buffered_files_on_tmpfs_are_read_and_written_on_the_callers_thread_with_System_IOs_results()
    {
        using TmpfsMount? tmpfs = TmpfsMount.TryMount("16m", out string reason);
        if (tmpfs is null || !SpindleRandomAccess.IsIoUringAvailable)
        {
            Console.WriteLine($"skipped: {(tmpfs is null ? reason : IoUringEngine.UnavailableReason)}");
            return;
        }
        byte[] data = RandomBytes(64 << 10);
        File.WriteAllBytes(tmpfs.File("data"), data);

        using SafeFileHandle handle = File.OpenHandle(tmpfs.File("data"), FileMode.Open, FileAccess.ReadWrite);
        HandleFacts facts = HandleFacts.Of(handle);
        Assert.True(facts.SynchronousBackend, "a buffered file on tmpfs is memory the kernel copies on the calling thread");
        Assert.False(facts.NonBlockingReads, "tmpfs refuses RWF_NOWAIT, so the fast path is not tried");

        long placed = EngineCounts.SharedRingPlacements;
        using (HeldFileRequest.Hold()) // others in flight: without row 3, reads would go to the ring
        {
            foreach (long offset in new long[] { 0, 4096, 10_000, (64 << 10) - 100, 64 << 10 })
            {
                byte[] spindle = new byte[8192], system = new byte[8192];
                ValueTask<int> read = SpindleRandomAccess.ReadAsync(handle, spindle, offset, IoEngine.IoUring);
                Assert.True(read.IsCompletedSuccessfully, $"the read at {offset} ran on the caller's thread");
                Assert.Equal(System.IO.RandomAccess.Read(handle, system, offset), await read);
                Assert.Equal(system, spindle);
            }
            byte[] written = RandomBytes(60_000);
            ValueTask write = SpindleRandomAccess.WriteAsync(handle, written, 1000, IoEngine.IoUring);
            Assert.True(write.IsCompletedSuccessfully, "the write ran on the caller's thread");
            await write;
            // A larger copy runs on a pool thread (requests one thread starts then use every core), never on the ring.
            byte[] large = RandomBytes(200_000);
            await SpindleRandomAccess.WriteAsync(handle, large, 61_000, IoEngine.IoUring);
            byte[] largeBack = new byte[200_000];
            Assert.Equal(200_000, await SpindleRandomAccess.ReadAsync(handle, largeBack, 61_000, IoEngine.IoUring));
            Assert.Equal(large, largeBack);
            byte[] expected = new byte[61_000 + large.Length];
            data.AsSpan(0, 1000).CopyTo(expected);
            written.CopyTo(expected, 1000);
            large.CopyTo(expected, 61_000);
            Assert.Equal(expected, File.ReadAllBytes(tmpfs.File("data")));

            // Nothing to write back: a flush and a data sync return on the caller's thread.
            ValueTask flush = SpindleRandomAccess.FlushToDiskAsync(handle, IoEngine.IoUring);
            Assert.True(flush.IsCompletedSuccessfully, "the flush ran on the caller's thread");
            await flush;
            ValueTask dataSync = SpindleRandomAccess.FlushDataToDiskAsync(handle, IoEngine.IoUring);
            Assert.True(dataSync.IsCompletedSuccessfully, "the data sync ran on the caller's thread");
            await dataSync;
        }
        Assert.Equal(placed, EngineCounts.SharedRingPlacements);

        // The thread-pool engine (Auto without io_uring, a synchronous stream's *Async calls) copies on the caller's thread too.
        byte[] pooled = new byte[4096], expectedBytes = new byte[4096];
        ValueTask<int> poolRead = SpindleRandomAccess.ReadAsync(handle, pooled, 2048, IoEngine.ThreadPool);
        Assert.True(poolRead.IsCompletedSuccessfully, "the thread-pool engine's read ran on the caller's thread");
        Assert.Equal(System.IO.RandomAccess.Read(handle, expectedBytes, 2048), await poolRead);
        Assert.Equal(expectedBytes, pooled);

        // A batch's members are copies too: shared between the caller and pool work items like page-cache hits, with
        // System.IO's result for every request (the end of the file included).
        const int Members = 24;
        var requests = new BatchReadRequest[Members];
        var results = new BatchReadResult[Members];
        long fileLength = System.IO.RandomAccess.GetLength(handle);
        for (int i = 0; i < Members; i++)
        {
            requests[i] = new BatchReadRequest(handle, new byte[4096], i == Members - 1 ? fileLength - 100 : i * 4000L);
        }
        await SpindleRandomAccess.ReadBatchAsync(requests, results, IoEngine.IoUring);
        for (int i = 0; i < Members; i++)
        {
            byte[] expectedMember = new byte[4096];
            int count = System.IO.RandomAccess.Read(handle, expectedMember, requests[i].FileOffset);
            Assert.Null(results[i].Exception);
            Assert.Equal(count, results[i].BytesRead);
            Assert.Equal(expectedMember, requests[i].Buffer.ToArray());
        }

        // The content methods read such a file with one plain read, and return what System.IO returns.
        Assert.Equal(File.ReadAllBytes(tmpfs.File("data")), await SpindleFile.ReadAllBytesAsync(tmpfs.File("data")));
        File.WriteAllText(tmpfs.File("text"), "héllo\nwörld\n");
        Assert.Equal(File.ReadAllText(tmpfs.File("text")), await SpindleFile.ReadAllTextAsync(tmpfs.File("text")));
    }

    [Fact]
    public async Task Files_on_FUSE_are_read_on_pool_threads_not_handed_to_the_rings_workers_and_read_what_System_IO_reads()
    {
        using FuseMount? fuse = FuseMount.TryMount(out string reason);
        if (fuse is null || !SpindleRandomAccess.IsIoUringAvailable)
        {
            Console.WriteLine($"skipped: {(fuse is null ? reason : IoUringEngine.UnavailableReason)}");
            return;
        }
        byte[] data = RandomBytes(1 << 20);
        File.WriteAllBytes(fuse.SourceFile("data"), data);

        using SafeFileHandle handle = File.OpenHandle(fuse.File("data"), FileMode.Open, FileAccess.Read);
        HandleFacts facts = HandleFacts.Of(handle);
        // The kernel's own answer, asked independently at a real offset: what io_uring goes by too.
        Assert.Equal(RefusesNonBlockingRead(handle), facts.RefusesNonBlockingIo);
        if (!facts.RefusesNonBlockingIo)
        {
            Console.WriteLine("skipped: this kernel's FUSE reads without blocking, so the ring serves it without workers");
            return;
        }
        Assert.False(facts.NonBlockingReads);

        // FUSE mounts have anonymous device numbers, which later mounts reuse: Spindle's own open leaves the kind to its
        // first use, which asks the file system's type (one fstatfs); whether that type refuses non-blocking reads was
        // probed once for the type, above, and is not asked again.
        using (SafeFileHandle opened = Spindle.Handles.FileOpener.Open(fuse.File("data"), FileMode.Open, FileAccess.Read, FileShare.Read,
            FileOptions.None, 0, unixCreateMode: null, spindleFlags: 0, out Spindle.Handles.OpenedFile learned))
        {
            Assert.Equal(Spindle.Handles.FileSystemKind.Unknown, learned.FileSystem);
            HandleFacts ownFacts = HandleFacts.Of(opened, learned);
            Assert.True(ownFacts.RefusesNonBlockingIo);
            Assert.Equal(1, ownFacts.SystemCalls);
        }

        var mechanisms = new List<string?>();
        using System.Diagnostics.Metrics.MeterListener listener = ListenForMechanisms(mechanisms);
        long placed = EngineCounts.SharedRingPlacements;
        const int InFlight = 16;
        var buffers = new byte[InFlight][];
        var reads = new Task<int>[InFlight];
        long[] offsets = new long[InFlight];
        var random = new Random(5);
        using (HeldFileRequest.Hold())
        {
            for (int i = 0; i < InFlight; i++)
            {
                buffers[i] = new byte[4096];
                offsets[i] = random.NextInt64(0, data.Length - 2048);
                reads[i] = SpindleRandomAccess.ReadAsync(handle, buffers[i], offsets[i], IoEngine.IoUring).AsTask();
            }
            await Task.WhenAll(reads).WaitAsync(TimeSpan.FromSeconds(30));
        }
        for (int i = 0; i < InFlight; i++)
        {
            byte[] expected = new byte[4096];
            int count = System.IO.RandomAccess.Read(handle, expected, offsets[i]);
            Assert.Equal(count, reads[i].Result);
            Assert.Equal(expected, buffers[i]);
        }
        Assert.Equal(placed, EngineCounts.SharedRingPlacements);
        lock (mechanisms)
        {
            Assert.Equal(InFlight, mechanisms.Count(m => m == "pool"));
            Assert.DoesNotContain("ring", mechanisms);
        }
        Assert.Equal(data, await SpindleFile.ReadAllBytesAsync(fuse.File("data")));

        // A write-only handle cannot be probed by a read: on a file system that is neither a local disk nor memory it
        // is taken as refusing, and its writes run on pool threads too.
        using (SafeFileHandle writer = File.OpenHandle(fuse.File("data"), FileMode.Open, FileAccess.Write, FileShare.ReadWrite))
        {
            Assert.True(HandleFacts.Of(writer).RefusesNonBlockingIo);
            byte[] written = RandomBytes(8192);
            lock (mechanisms)
            {
                mechanisms.Clear();
            }
            using (HeldFileRequest.Hold())
            {
                await SpindleRandomAccess.WriteAsync(writer, written, 4096, IoEngine.IoUring).AsTask().WaitAsync(TimeSpan.FromSeconds(30));
            }
            lock (mechanisms)
            {
                Assert.Equal(["pool"], mechanisms);
            }
            written.CopyTo(data, 4096);
        }
        Assert.Equal(data, File.ReadAllBytes(fuse.SourceFile("data")));
    }

    [Fact]
    public void A_device_number_that_a_later_mount_reuses_is_not_taken_for_the_earlier_file_system()
    {
        // tmpfs and FUSE mounts get anonymous device numbers, and the lowest free one again after an unmount: what the
        // handles learned of a tmpfs must not make a FUSE mount that took its number a memory file system.
        for (int attempt = 0; attempt < 5; attempt++)
        {
            ulong tmpfsDevice;
            using (TmpfsMount? tmpfs = TmpfsMount.TryMount("1m", out string reason))
            {
                if (tmpfs is null)
                {
                    Console.WriteLine($"skipped: {reason}");
                    return;
                }
                File.WriteAllBytes(tmpfs.File("f"), new byte[10]);
                (HandleFacts tmpfsFacts, tmpfsDevice) = OpenForReading(tmpfs.File("f"));
                Assert.True(tmpfsFacts.SynchronousBackend);
                Assert.False(tmpfsFacts.RefusesNonBlockingIo);
            }
            using FuseMount? fuse = FuseMount.TryMount(out string fuseReason);
            if (fuse is null)
            {
                Console.WriteLine($"skipped: {fuseReason}");
                return;
            }
            File.WriteAllBytes(fuse.SourceFile("f"), new byte[10]);
            (HandleFacts fuseFacts, ulong fuseDevice) = OpenForReading(fuse.File("f"));
            Assert.False(fuseFacts.SynchronousBackend, "a FUSE file taken for memory: its reads would block the caller");
            Assert.True(fuseFacts.RefusesNonBlockingIo);
            if (fuseDevice == tmpfsDevice)
            {
                return; // the number was reused, and the kind is the new mount's
            }
        }
        Console.WriteLine("no device number was reused in five mounts: the facts above were still checked");

        static (HandleFacts Facts, ulong Device) OpenForReading(string path)
        {
            using SafeFileHandle handle = Spindle.Handles.FileOpener.Open(path, FileMode.Open, FileAccess.Read, FileShare.Read,
                FileOptions.None, 0, unixCreateMode: null, spindleFlags: 0, out Spindle.Handles.OpenedFile opened);
            Assert.Equal(0, Spindle.Interop.Libc.FStat(handle, out _, out _, out ulong device));
            return (HandleFacts.Of(handle, opened), device);
        }
    }

    // preadv2(RWF_NOWAIT) of one byte at offset 0: EOPNOTSUPP where the file system cannot read without blocking.
    private static unsafe bool RefusesNonBlockingRead(SafeFileHandle handle)
    {
        byte one;
        Iovec vector = new() { Base = &one, Length = 1 };
        return PReadV2((int)handle.DangerousGetHandle(), &vector, 1, 0, RWF_NOWAIT) < 0 && Marshal.GetLastPInvokeError() == EOPNOTSUPP;
    }

    private static System.Diagnostics.Metrics.MeterListener ListenForMechanisms(List<string?> seen)
    {
        var listener = new System.Diagnostics.Metrics.MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == "Spindle" && instrument.Name == "spindle.io.operations")
            {
                l.EnableMeasurementEvents(instrument);
            }
        };
        listener.SetMeasurementEventCallback<long>((_, _, tags, _) =>
        {
            foreach (KeyValuePair<string, object?> tag in tags)
            {
                if (tag.Key == "spindle.io.mechanism")
                {
                    lock (seen)
                    {
                        seen.Add((string?)tag.Value);
                    }
                }
            }
        });
        listener.Start();
        return listener;
    }

    private static byte[] RandomBytes(int length)
    {
        byte[] bytes = new byte[length];
        new Random(length).NextBytes(bytes);
        return bytes;
    }
}
