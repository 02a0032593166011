using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Tests.Infrastructure;
using static Spindle.Tests.Beyond.CopyTests;

namespace Spindle.Tests.Beyond;

// Copies into a FIFO that a reader consumes: the same outcome and the same bytes at the reader as File.Copy. The reader
// is made to wait in open(2) before the copy starts (its thread's wchan is read), so each case is the same every run: a
// pipe that fills (64 KiB, 1 MiB, 16 MiB), a reader that reads one byte at a time, one that opened with O_NONBLOCK and
// polls, sources on disk and on tmpfs, eight copies at once. A copy that wrote its FIFO through a non-blocking
// descriptor would meet a full pipe with EAGAIN here.
public partial class CopySpecialFileTests
{
    public static TheoryData<string, int, bool> FifoCases()
    {
        var data = new TheoryData<string, int, bool>();
        foreach (bool onTmpfs in new[] { false, true })
        {
            foreach (int size in new[] { 64 << 10, 1 << 20, 16 << 20 })
            {
                data.Add(FifoReader.Blocking, size, onTmpfs);
                data.Add(FifoReader.NonBlocking, size, onTmpfs);
            }
            data.Add(FifoReader.OneByteAtATime, 256 << 10, onTmpfs);
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(FifoCases))]
    public async Task Copy_into_a_FIFO_whose_reader_is_waiting_delivers_every_byte_like_File_Copy(string reader, int size, bool sourceOnTmpfs)
    {
        using var dir = new TempDirectory();
        string why = "";
        using TmpfsMount? tmpfs = sourceOnTmpfs ? TmpfsMount.TryMount("64m", out why) : null;
        if (sourceOnTmpfs && tmpfs is null)
        {
            output.WriteLine($"SKIPPED: {why}");
            return;
        }
        string source = sourceOnTmpfs ? tmpfs!.File("source") : dir.File("source");
        byte[] data = RandomBytes(size, size + 17);
        File.WriteAllBytes(source, data);

        var results = new List<(string Copier, string Outcome, string Received)>();
        foreach (string copier in s_copiers)
        {
            string fifo = dir.File("fifo-" + copier);
            TestLibc.CreateFifo(fifo);
            using var fifoReader = FifoReader.Start(fifo, reader);
            fifoReader.WaitUntilReady();

            string outcome = await OutcomeOf(Run(copier, source, fifo, overwrite: true));
            if (outcome != "ok")
            {
                fifoReader.Release();
            }
            byte[]? received = fifoReader.Finish(Timeout);
            results.Add((copier, outcome, received is null ? "reader did not finish" : received.AsSpan().SequenceEqual(data) ? "all bytes" : $"{received.Length} bytes, not the source's"));
        }

        output.WriteLine(string.Join("\n", results));
        Assert.All(results, r => Assert.Equal(("ok", "all bytes"), (r.Outcome, r.Received)));
    }

    [Fact]
    public async Task Eight_copies_into_eight_FIFOs_at_once_deliver_every_byte_like_File_Copy()
    {
        using var dir = new TempDirectory();
        byte[] data = RandomBytes(1 << 20, 23);
        File.WriteAllBytes(dir.File("source"), data);
        var failures = new List<string>();
        foreach (string copier in s_copiers)
        {
            var readers = new List<FifoReader>();
            try
            {
                for (int i = 0; i < 8; i++)
                {
                    string fifo = dir.File($"fifo-{copier}-{i}");
                    TestLibc.CreateFifo(fifo);
                    readers.Add(FifoReader.Start(fifo, i % 2 == 0 ? FifoReader.Blocking : FifoReader.NonBlocking));
                }
                readers.ForEach(r => r.WaitUntilReady());
                string[] outcomes = await Task.WhenAll(readers.Select(r => OutcomeOf(Run(copier, dir.File("source"), r.Path, overwrite: true))));
                for (int i = 0; i < readers.Count; i++)
                {
                    if (outcomes[i] != "ok")
                    {
                        readers[i].Release();
                    }
                    byte[]? received = readers[i].Finish(Timeout);
                    if (outcomes[i] != "ok" || received is null || !received.AsSpan().SequenceEqual(data))
                    {
                        failures.Add($"{copier} #{i}: {outcomes[i]}, received {received?.Length.ToString() ?? "nothing (reader did not finish)"}");
                    }
                }
            }
            finally
            {
                readers.ForEach(r => r.Dispose());
            }
        }
        Assert.Empty(failures);
    }

    // System.IO emulates FileShare with flock(2), on a FIFO too: a reader that opened the FIFO by its path holds a
    // shared lock, and a copy (FileShare.None, an exclusive lock) fails with a sharing violation, EAGAIN, on both sides.
    // Here the reader's lock is taken before the copy starts; a copy that arrives while the reader is still in open(2)
    // races it for the lock, on both sides alike (docs/reliability.md).
    [Fact]
    public async Task A_reader_that_holds_its_lock_before_the_copy_comes_makes_Copy_fail_like_File_Copy()
    {
        using var dir = new TempDirectory();
        // Small enough to fit the pipe: a copy that wrongly succeeded finishes, and the reader then gets its bytes.
        File.WriteAllBytes(dir.File("source"), RandomBytes(1_000, 29));
        var results = new List<(string Outcome, int Received)>();
        foreach (string copier in s_copiers)
        {
            string fifo = dir.File("fifo-" + copier);
            TestLibc.CreateFifo(fifo);
            // A lock-free writer that lets the reader's open return at once; the reader then holds LOCK_SH.
            SafeFileHandle keeper = TestLibc.OpenWithFlags(fifo, 2 /* O_RDWR */);
            var reader = new FileStream(fifo, FileMode.Open, FileAccess.Read, FileShare.Read, bufferSize: 1);

            string outcome = Kind(await OutcomeOf(Run(copier, dir.File("source"), fifo, overwrite: true)));

            keeper.Dispose(); // the last writer gone: the reader sees the end of what was written
            var received = new MemoryStream();
            await reader.CopyToAsync(received).WaitAsync(Timeout);
            reader.Dispose();
            results.Add((outcome, (int)received.Length));
        }

        output.WriteLine(string.Join("\n", results));
        Assert.Equal(("System.IO.IOException (11)", 0), results[0]);
        Assert.All(results, r => Assert.Equal(results[0], r));
    }

    /// <summary>
    /// A thread that opens a FIFO for reading without a lock (a raw descriptor, as <c>cat</c> does) and reads it to its
    /// end, in one of three ways.
    /// </summary>
    private sealed class FifoReader : IDisposable
    {
        internal const string Blocking = "blocking open, 64 KiB reads";
        internal const string NonBlocking = "O_NONBLOCK open, poll(2) then read";
        internal const string OneByteAtATime = "one byte per read, 1 ms pause per 512 bytes";

        private const int O_RDONLY = 0;
        private const int EAGAIN = 11;

        private readonly string _kind;
        private readonly Thread _thread;
        private readonly ManualResetEventSlim _opened = new();
        private readonly MemoryStream _received = new();
        private int _threadId;
        private Exception? _failure;

        private FifoReader(string path, string kind)
        {
            Path = path;
            _kind = kind;
            _thread = new Thread(ReadToEnd) { IsBackground = true, Name = "FIFO reader" };
        }

        internal string Path { get; }

        internal static FifoReader Start(string path, string kind)
        {
            var reader = new FifoReader(path, kind);
            reader._thread.Start();
            return reader;
        }

        /// <summary>
        /// Returns once the reader waits for a writer: in <c>open(2)</c>, or, opened with O_NONBLOCK, once its open returned.
        /// </summary>
        internal void WaitUntilReady()
        {
            if (_kind != NonBlocking)
            {
                TestLibc.WaitUntilWaitingForFifoPartner(() => Volatile.Read(ref _threadId), TimeSpan.FromSeconds(60));
            }
            else if (!_opened.Wait(TimeSpan.FromSeconds(60)))
            {
                throw new TimeoutException("the O_NONBLOCK FIFO reader never opened");
            }
        }

        /// <summary>What the reader received, or null when it did not reach the end in time; a read error is thrown.</summary>
        internal byte[]? Finish(TimeSpan timeout)
        {
            if (!_thread.Join(timeout))
            {
                return null;
            }
            return _failure is null ? _received.ToArray() : throw new IOException($"the FIFO reader failed: {_failure.Message}", _failure);
        }

        /// <summary>Lets a reader whose copy failed end: a writer that opens and closes at once (the reader then sees the end).</summary>
        internal void Release() => TestLibc.OpenAndClose(Path, 1 /* O_WRONLY */ | 0x800 /* O_NONBLOCK */);

        public void Dispose()
        {
            if (_thread.IsAlive)
            {
                Release();
                _thread.Join(TimeSpan.FromSeconds(10));
            }
        }

        private unsafe void ReadToEnd()
        {
            Volatile.Write(ref _threadId, TestLibc.GetTid());
            int fd = -1;
            try
            {
                fd = TestLibc.Open(Path, (_kind == NonBlocking ? 0x800 /* O_NONBLOCK */ : O_RDONLY) | 0x80000 /* O_CLOEXEC */);
                if (fd < 0)
                {
                    throw new IOException($"open: errno {Marshal.GetLastPInvokeError()}");
                }
                _opened.Set();
                byte[] buffer = new byte[_kind == OneByteAtATime ? 1 : 64 << 10];
                fixed (byte* p = buffer)
                {
                    while (true)
                    {
                        if (_kind == NonBlocking)
                        {
                            // Until the first writer came and went, an empty FIFO polls as not ready (no hang-up).
                            var poll = new TestLibc.PollFd { Fd = fd, Events = TestLibc.POLLIN };
                            if (TestLibc.Poll(&poll, 1, 60_000) <= 0)
                            {
                                throw new IOException("poll: nothing came within 60 s");
                            }
                        }
                        nint read = TestLibc.Read(fd, p, (nuint)buffer.Length);
                        if (read < 0)
                        {
                            int errno = Marshal.GetLastPInvokeError();
                            if (errno == EAGAIN && _kind == NonBlocking)
                            {
                                continue;
                            }
                            throw new IOException($"read: errno {errno}");
                        }
                        if (read == 0)
                        {
                            return;
                        }
                        _received.Write(buffer, 0, (int)read);
                        if (_kind == OneByteAtATime && _received.Length % 512 == 0)
                        {
                            Thread.Sleep(1);
                        }
                    }
                }
            }
            catch (Exception e)
            {
                _failure = e;
            }
            finally
            {
                if (fd >= 0)
                {
                    TestLibc.Close(fd);
                }
            }
        }
    }
}
