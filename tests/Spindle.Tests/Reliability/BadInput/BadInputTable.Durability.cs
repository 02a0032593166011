using Microsoft.Win32.SafeHandles;
using static Spindle.Tests.Reliability.BadInput.BadInputCase;
using SysRandomAccess = System.IO.RandomAccess;

namespace Spindle.Tests.Reliability.BadInput;

/// <summary>The rows of batch reads, data syncs, durable writes and group commit.</summary>
public static partial class BadInputTable
{
    private static void AddDurabilityRows()
    {
        // ---- data sync and durable writes: System.IO's counterparts are FlushToDisk and Write ----
        Rows["SpindleRandomAccess.FlushDataToDisk(SafeFileHandle)"] = c =>
        [
            .. HandleCases(c, SpindleRandomAccess.FlushDataToDisk, SysRandomAccess.FlushToDisk),
            SameAsSystemIo("socket", () => SpindleRandomAccess.FlushDataToDisk(c.Socket), () => SysRandomAccess.FlushToDisk(c.Socket)),
        ];
        Rows["SpindleRandomAccess.FlushDataToDiskAsync(SafeFileHandle, CancellationToken)"] = c =>
        [
            .. HandleCases(c, h => Wait(SpindleRandomAccess.FlushDataToDiskAsync(h)), SysRandomAccess.FlushToDisk),
            Throws<OperationCanceledException>("a cancelled token", () => Wait(SpindleRandomAccess.FlushDataToDiskAsync(c.Spindle.ReadWrite, new CancellationToken(canceled: true)))),
        ];
        Rows["SpindleRandomAccess.FlushDataToDiskAsync(SafeFileHandle, IoEngine, CancellationToken)"] = c =>
        [
            .. Enum.GetValues<IoEngine>().SelectMany(e => HandleCases(c, h => Wait(SpindleRandomAccess.FlushDataToDiskAsync(h, e)), SysRandomAccess.FlushToDisk)
                .Select(k => k with { Input = $"{k.Input} on {e}" })),
            .. Enum.GetValues<IoEngine>().Select(e => Throws<OperationCanceledException>($"a cancelled token on {e}",
                () => Wait(SpindleRandomAccess.FlushDataToDiskAsync(c.Spindle.ReadWrite, e, new CancellationToken(canceled: true))))),
            Throws<ArgumentOutOfRangeException>("engine 99", () => Wait(SpindleRandomAccess.FlushDataToDiskAsync(c.Spindle.ReadWrite, (IoEngine)99))),
        ];
        Rows["SpindleRandomAccess.WriteDurable(SafeFileHandle, ReadOnlySpan<Byte>, Int64)"] = c => HandleOffsetCases(c, writes: true,
            (h, o) => SpindleRandomAccess.WriteDurable(h, new byte[10], o), (h, o) => SysRandomAccess.Write(h, new byte[10], o));
        Rows["SpindleRandomAccess.WriteDurableAsync(SafeFileHandle, ReadOnlyMemory<Byte>, Int64, CancellationToken)"] = c => AsyncCases(c, writes: true,
            (h, o, t) => Wait(SpindleRandomAccess.WriteDurableAsync(h, new byte[10], o, t)), (h, o, t) => Wait(SysRandomAccess.WriteAsync(h, new byte[10], o, t)));
        Rows["SpindleRandomAccess.WriteDurableAsync(SafeFileHandle, ReadOnlyMemory<Byte>, Int64, IoEngine, CancellationToken)"] = c => EngineCases(c, writes: true,
            (h, o, e, t) => Wait(SpindleRandomAccess.WriteDurableAsync(h, new byte[10], o, e, t)), (h, o, t) => Wait(SysRandomAccess.WriteAsync(h, new byte[10], o, t)));

        // ---- batch reads: every request is checked as ReadAsync checks its arguments; a request's I/O error is its result ----
        Rows["SpindleRandomAccess.ReadBatchAsync(ReadOnlyMemory<BatchReadRequest>, Memory<BatchReadResult>, CancellationToken)"] = c =>
            BatchCases(c, (requests, results) => Wait(SpindleRandomAccess.ReadBatchAsync(requests, results)));
        Rows["SpindleRandomAccess.ReadBatchAsync(ReadOnlyMemory<BatchReadRequest>, Memory<BatchReadResult>, IoEngine, CancellationToken)"] = c =>
        [
            .. Enum.GetValues<IoEngine>().SelectMany(e => BatchCases(c, (requests, results) => Wait(SpindleRandomAccess.ReadBatchAsync(requests, results, e)))
                .Select(k => k with { Input = $"{k.Input} on {e}" })),
            Throws<ArgumentOutOfRangeException>("engine 99", () => Wait(SpindleRandomAccess.ReadBatchAsync(new[] { new BatchReadRequest(c.Spindle.ReadWrite, new byte[1], 0) }, new BatchReadResult[1], (IoEngine)99))),
            Throws<OperationCanceledException>("a cancelled token", () => Wait(SpindleRandomAccess.ReadBatchAsync(new[] { new BatchReadRequest(c.Spindle.ReadWrite, new byte[1], 0) }, new BatchReadResult[1], IoEngine.Auto, new CancellationToken(canceled: true)))),
        ];
        Rows["SpindleRandomAccess.ReadBatch(ReadOnlySpan<BatchReadRequest>, Span<BatchReadResult>)"] = c =>
            BatchCases(c, (requests, results) => SpindleRandomAccess.ReadBatch(requests, results));
        Rows["BatchReadRequest..ctor(SafeFileHandle, Memory<Byte>, Int64)"] = Nothing; // a plain value: the batch call checks it
        Rows["BatchReadRequest.get_Handle()"] = Nothing;
        Rows["BatchReadRequest.get_Buffer()"] = Nothing;
        Rows["BatchReadRequest.get_FileOffset()"] = Nothing;
        Rows["BatchReadResult.get_BytesRead()"] = Nothing;
        Rows["BatchReadResult.get_Exception()"] = Nothing;
        Rows["BatchReadResult.get_Succeeded()"] = Nothing;

        // ---- appending ----
        Rows["AppendLog.AppendAsync(SafeFileHandle, ReadOnlyMemory<Byte>, CancellationToken)"] = c =>
        [
            .. SpindleOnlyHandleCases(c, h => Wait(AppendLog.AppendAsync(h, new byte[] { 1, 2, 3 }))),
            Throws<ArgumentException>("a handle without O_APPEND", () => Wait(AppendLog.AppendAsync(c.Spindle.ReadWrite, new byte[] { 1, 2, 3 }))),
            Throws<ArgumentException>("a read-only handle", () => Wait(AppendLog.AppendAsync(c.Spindle.ReadOnly, new byte[] { 1, 2, 3 }))),
        ];
        Rows["AppendLogWriter..ctor(SafeFileHandle)"] = c =>
        [
            .. SpindleOnlyHandleCases(c, h => _ = new AppendLogWriter(h)),
            Throws<ArgumentException>("a handle without O_APPEND", () => _ = new AppendLogWriter(c.Spindle.ReadWrite)),
        ];
        Rows["AppendLogWriter.AppendDurableAsync(ReadOnlyMemory<Byte>, CancellationToken)"] = Nothing; // its handle was checked by the constructor
    }

    private delegate void Batch(BatchReadRequest[] requests, BatchReadResult[] results);

    // Each bad request sits after a good one: the call must throw before reading either.
    private static IEnumerable<BadInputCase> BatchCases(BadInputContext c, Batch batch)
    {
        BadInputCase Case<TException>(string input, SafeFileHandle handle, long offset, Memory<byte> buffer = default) where TException : Exception =>
            Throws<TException>(input, () => batch([new BatchReadRequest(c.Spindle.ReadWrite, new byte[10], 0), new BatchReadRequest(handle, buffer.IsEmpty ? new byte[10] : buffer, offset)], new BatchReadResult[2]));
        yield return Case<ArgumentNullException>("a request with a null handle", null!, 0);
        yield return Case<ArgumentException>("a request with an invalid handle", c.Invalid, 0);
        yield return Case<ObjectDisposedException>("a request with a closed handle", c.Spindle.Closed, 0);
        yield return Case<ArgumentOutOfRangeException>("a request at offset -1", c.Spindle.ReadWrite, -1);
        yield return Case<ArgumentException>("a request on an O_DIRECT handle, misaligned offset", c.Direct, 1, c.Aligned.Memory[..4096]);
        yield return Case<ArgumentException>("a request on an O_DIRECT handle, misaligned address", c.Direct, 0, c.Aligned.Memory.Slice(1, 4096));
        yield return Throws<ArgumentException>("results shorter than requests", () => batch([new BatchReadRequest(c.Spindle.ReadWrite, new byte[10], 0)], []));
    }
}
