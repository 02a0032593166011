using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;

namespace Spindle.Workloads.Durability;

/// <summary>
/// Concurrent writers of 100-byte records, each record durable before its writer goes on: System.IO's way
/// (each writer its own <see cref="FileStream"/> opened with <see cref="FileMode.Append"/>, a write and
/// <c>Flush(true)</c> per record) against Spindle's group commit (<see cref="AppendLogWriter.AppendDurableAsync"/>).
/// With one writer and <c>baseline</c>, the Spindle side is a plain append and <c>fdatasync</c> per record: the cost a
/// lone group-commit caller should match.
/// </summary>
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public sealed class GroupCommit : Workload
{
    private const int RecordSize = 100;

    private readonly int _writers;
    private readonly int _recordsPerWriter;
    private readonly bool _baseline;
    private readonly byte[] _record = new byte[RecordSize];
    private readonly Task[] _tasks;
    private FileStream[] _streams = [];
    private SafeFileHandle? _log;
    private AppendLogWriter? _writer;

    /// <summary>Creates the row: <paramref name="writers"/> writers, <paramref name="recordsPerWriter"/> records each per invocation.</summary>
    public GroupCommit(int writers, int recordsPerWriter, bool baseline = false)
        : base("Beyond", $"GroupCommit{(baseline ? ".AppendThenFdatasync" : "")}({writers} writer{(writers == 1 ? "" : "s")}, {RecordSize} B)")
    {
        _writers = writers;
        _recordsPerWriter = recordsPerWriter;
        _baseline = baseline;
        _tasks = new Task[writers];
        new Random(5).NextBytes(_record);
    }

    /// <inheritdoc />
    public override IReadOnlyList<Contender> Contenders => Workloads.Contenders.Synchronous;

    /// <inheritdoc />
    public override bool IsAsync => true;

    /// <inheritdoc />
    public override int OperationsPerInvocation => _writers * _recordsPerWriter;

    /// <inheritdoc />
    public override void Setup(BenchFiles files)
    {
        string systemPath = files.Target("group-commit-system.log");
        string spindlePath = files.Target("group-commit-spindle.log");
        _streams = new FileStream[_writers];
        for (int i = 0; i < _writers; i++)
        {
            _streams[i] = new FileStream(systemPath, FileMode.Append, FileAccess.Write, FileShare.ReadWrite, bufferSize: 4096, FileOptions.None);
        }
        _log = SpindleFile.OpenHandle(spindlePath, new SpindleFileOptions
        {
            Mode = FileMode.OpenOrCreate, Access = FileAccess.Write, Share = FileShare.ReadWrite, AtomicAppend = true,
        });
        _writer = new AppendLogWriter(_log);
    }

    /// <inheritdoc />
    public override async ValueTask RunAsync(Contender contender)
    {
        for (int w = 0; w < _writers; w++)
        {
            // System.IO's writers block in fsync: each gets a thread of its own, so that the pool's growth does not limit them.
            FileStream stream = _streams[w];
            _tasks[w] = contender == Contender.SystemIO
                ? Task.Factory.StartNew(() => SystemWriter(stream), CancellationToken.None, TaskCreationOptions.LongRunning, TaskScheduler.Default)
                : SpindleWriter();
        }
        await Task.WhenAll(_tasks).ConfigureAwait(false);
    }

    private void SystemWriter(FileStream stream)
    {
        for (int i = 0; i < _recordsPerWriter; i++)
        {
            stream.Write(_record);
            stream.Flush(flushToDisk: true);
        }
    }

    private async Task SpindleWriter()
    {
        await Task.Yield();
        for (int i = 0; i < _recordsPerWriter; i++)
        {
            if (_baseline)
            {
                AppendLog.Append(_log!, _record);
                SpindleRandomAccess.FlushDataToDisk(_log!);
            }
            else
            {
                await _writer!.AppendDurableAsync(_record).ConfigureAwait(false);
            }
        }
    }

    /// <inheritdoc />
    protected override void Dispose(bool disposing)
    {
        foreach (FileStream stream in _streams)
        {
            stream.Dispose();
        }
        _log?.Dispose();
    }
}
