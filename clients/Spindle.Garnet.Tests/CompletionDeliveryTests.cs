using System.Diagnostics.Metrics;
using Spindle.Garnet;
using Tsavorite.core;

namespace Spindle.Garnet.Tests;

/// <summary>Runs its tests alone: which thread reaps a completion depends on what else in the process waits for Spindle's I/O.</summary>
[CollectionDefinition(nameof(RunsAlone), DisableParallelization = true)]
public sealed class RunsAlone;

/// <summary>
/// Where the device's reads run and where their callbacks are delivered: by default on the asking thread, calling back
/// before ReadAsync returns; with ReadEngine Auto on io_uring where the kernel allows it (else as by default), each
/// callback run by the thread that reaped the completion — the ring's thread or a session polling in TryComplete — so
/// that no read needs a free thread-pool thread to finish.
/// </summary>
[Collection(nameof(RunsAlone))]
public sealed class CompletionDeliveryTests
{
    [Fact]
    public void ByDefaultAReadRunsOnTheAskingThreadAndCallsBackBeforeReadAsyncReturns()
    {
        using var directory = new TestDirectory();
        const int Size = 4096;
        byte[] file = new byte[Size];
        new Random(33).NextBytes(file);
        File.WriteAllBytes(Path.Combine(directory.Path, "hlog.0"), file);
        using var device = new SpindleStorageDevice(Path.Combine(directory.Path, "hlog"));
        device.Initialize(1L << 30);
        Assert.Equal(IoEngine.Sync, device.ReadEngine);

        using var reads = new ReadsByEngine("sync");
        using var buffer = new NativeBuffer(Size);
        int callbackThread = 0, askingThread = 0;
        bool calledBackBeforeReturn = false;
        (uint Error, uint Bytes) result = (uint.MaxValue, 0);
        var session = new Thread(() =>
        {
            askingThread = Environment.CurrentManagedThreadId;
            device.ReadAsync(0, buffer.Address, Size, (error, bytes, _, _) =>
            {
                result = (error, bytes);
                callbackThread = Environment.CurrentManagedThreadId;
            }, null);
            calledBackBeforeReturn = callbackThread != 0;
        });
        session.Start();
        session.Join();

        Assert.True(calledBackBeforeReturn, "the callback had not run when ReadAsync returned");
        Assert.Equal((0u, (uint)Size), result);
        Assert.Equal(askingThread, callbackThread);
        Assert.True(buffer.Span.SequenceEqual(file));
        Assert.True(reads.OnEngine >= 1, "the read did not run on the Sync engine");
    }

    [Fact]
    public void AutoReadsRunOnIoUringWhereAvailableElseSyncAndTheirCallbacksDoNotWaitForThePool()
    {
        using var directory = new TestDirectory();
        const int Count = 64;
        const int Size = 4096;
        byte[] file = new byte[Count * Size];
        new Random(32).NextBytes(file);
        File.WriteAllBytes(Path.Combine(directory.Path, "hlog.0"), file);
        using var device = new SpindleStorageDevice(Path.Combine(directory.Path, "hlog"), new SpindleStorageDeviceOptions { ReadEngine = IoEngine.Auto });
        device.Initialize(1L << 30);
        IoEngine expected = SpindleRandomAccess.IsIoUringAvailable ? IoEngine.IoUring : IoEngine.Sync;
        Assert.Equal(expected, device.ReadEngine);

        using var reads = new ReadsByEngine(expected == IoEngine.IoUring ? "iouring" : "sync");
        // A session's thread (not a pool thread) starts the reads, then waits as Garnet's CompletePending(wait: true)
        // does, calling TryComplete in its loop.
        using var buffer = new NativeBuffer(Count * Size);
        int completed = 0, onPool = 0, failed = 0;
        var session = new Thread(() =>
        {
            for (int i = 0; i < Count; i++)
            {
                device.ReadAsync((ulong)(i * Size), buffer.Address + (i * Size), Size, (error, bytes, _, _) =>
                {
                    // A pool thread that was already polling the shared ring for another test's requests (its run of
                    // completions outlives that test) may reap this read and run its callback, as the inline mode
                    // promises: that is the reaping thread, not a hand-off. Only a callback handed to the pool counts.
                    if (Thread.CurrentThread.IsThreadPoolThread && !Environment.StackTrace.Contains("RingThread.RunInline", StringComparison.Ordinal))
                    {
                        Interlocked.Increment(ref onPool);
                    }
                    if (error != 0 || bytes != Size)
                    {
                        Interlocked.Increment(ref failed);
                    }
                    Interlocked.Increment(ref completed);
                }, null);
            }
            while (Volatile.Read(ref completed) < Count)
            {
                device.TryComplete();
                Thread.Yield();
            }
        });
        session.Start();
        session.Join();

        Assert.Equal(0, failed);
        Assert.True(buffer.Span.SequenceEqual(file), "the reads did not bring back the file's bytes");
        Assert.True(reads.OnEngine >= Count, $"{reads.OnEngine} of {Count} reads ran on {reads.Engine}");
        // A callback runs on a pool thread only for a read the engine itself ran there (its router sends a read to a
        // pool thread when few are in flight); one it reaped from the ring is never handed to the pool.
        Assert.True(onPool <= reads.OnPoolThreads, $"{onPool} callbacks ran on pool threads, for {reads.OnPoolThreads} reads the engine ran on pool threads");
    }

    /// <summary>Counts, through Spindle's meter, the reads that ran on one engine and those it ran on a pool thread.</summary>
    private sealed class ReadsByEngine : IDisposable
    {
        private readonly MeterListener _listener = new();
        private long _onEngine;
        private long _onPoolThreads;

        public ReadsByEngine(string engine)
        {
            Engine = engine;
            _listener.InstrumentPublished = (instrument, listener) =>
            {
                if (instrument.Meter.Name == "Spindle" && instrument.Name == "spindle.io.operations")
                {
                    listener.EnableMeasurementEvents(instrument);
                }
            };
            _listener.SetMeasurementEventCallback<long>((_, value, tags, _) =>
            {
                bool read = false, onEngine = false, onPool = false;
                foreach (var tag in tags)
                {
                    read |= tag.Key == "disk.io.direction" && (string?)tag.Value == "read";
                    onEngine |= tag.Key == "spindle.engine" && (string?)tag.Value == Engine;
                    onPool |= tag.Key == "spindle.io.mechanism" && (string?)tag.Value is "pool" or "blocking";
                }
                if (read && onEngine)
                {
                    Interlocked.Add(ref _onEngine, value);
                }
                if (read && onPool)
                {
                    Interlocked.Add(ref _onPoolThreads, value);
                }
            });
            _listener.Start();
        }

        public string Engine { get; }

        public long OnEngine => Interlocked.Read(ref _onEngine);

        public long OnPoolThreads => Interlocked.Read(ref _onPoolThreads);

        public void Dispose() => _listener.Dispose();
    }
}
