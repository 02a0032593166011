using Microsoft.Win32.SafeHandles;
using Spindle.Tests.Infrastructure;
using static Spindle.Tests.Reliability.BadInput.BadInputCase;

namespace Spindle.Tests.Reliability.BadInput;

/// <summary>The rows of what System.IO does not have: direct I/O, aligned buffers, fast copy, engine facts.</summary>
public static partial class BadInputTable
{
    static BadInputTable()
    {
        AddStreamRows();
        AddBeyondRows();
        AddDurabilityRows();
        AddFilesRows();
        AddAsyncOpenRows();
    }

    private static void AddBeyondRows()
    {
        Rows["AlignedMemoryPool..ctor(Int32)"] = c =>
        [
            Throws<ArgumentOutOfRangeException>("0", () => _ = new AlignedMemoryPool(0)),
            Throws<ArgumentOutOfRangeException>("-4096", () => _ = new AlignedMemoryPool(-4096)),
            Throws<ArgumentOutOfRangeException>("3 (not a power of two)", () => _ = new AlignedMemoryPool(3)),
            Throws<ArgumentOutOfRangeException>("2 MiB (too large)", () => _ = new AlignedMemoryPool(2 << 20)),
        ];
        Rows["AlignedMemoryPool.get_Shared()"] = Nothing;
        Rows["AlignedMemoryPool.get_Alignment()"] = Nothing;
        Rows["AlignedMemoryPool.get_MaxBufferSize()"] = Nothing;
        Rows["AlignedMemoryPool.get_LargestPooledSize()"] = Nothing;
        Rows["AlignedMemoryPool.get_BuffersKeptPerSize()"] = Nothing;
        Rows["AlignedMemoryPool.Rent(Int32)"] = c =>
        [
            Throws<ArgumentOutOfRangeException>("-2", () => AlignedMemoryPool.Shared.Rent(-2).Dispose()),
            Throws<ArgumentOutOfRangeException>("int.MinValue", () => AlignedMemoryPool.Shared.Rent(int.MinValue).Dispose()),
            Throws<ArgumentOutOfRangeException>("MaxBufferSize + 1", () => AlignedMemoryPool.Shared.Rent(AlignedMemoryPool.Shared.MaxBufferSize + 1).Dispose()),
            Throws<ObjectDisposedException>("a disposed pool", () =>
            {
                var pool = new AlignedMemoryPool(512);
                pool.Dispose();
                pool.Rent(512).Dispose();
            }),
        ];

        // A plain value (a record struct): no member validates, so there is no bad input to try.
        foreach (string member in (string[])["..ctor(Int32, Int32)", ".get_MemoryAlignment()", ".set_MemoryAlignment(Int32)", ".get_OffsetAlignment()",
            ".set_OffsetAlignment(Int32)", ".IsAligned(UIntPtr)", ".IsAligned(Int64)", ".AlignUp(Int64)", ".AlignDown(Int64)", ".ToString()",
            ".op_Inequality(DirectIOAlignment, DirectIOAlignment)", ".op_Equality(DirectIOAlignment, DirectIOAlignment)", ".GetHashCode()",
            ".Equals(Object)", ".Equals(DirectIOAlignment)", ".Deconstruct(Int32&, Int32&)"])
        {
            Rows["DirectIOAlignment" + member] = Nothing;
        }

        Rows["AppendLog.get_MaxPayloadLength()"] = Nothing;
        Rows["AppendLog.GetMaxFrameLength(Int32)"] = c =>
        [
            Throws<ArgumentOutOfRangeException>("-1", () => AppendLog.GetMaxFrameLength(-1)),
            Throws<ArgumentOutOfRangeException>("MaxPayloadLength + 1", () => AppendLog.GetMaxFrameLength(AppendLog.MaxPayloadLength + 1)),
        ];
        Rows["AppendLog.WriteFrame(ReadOnlySpan<Byte>, Span<Byte>)"] = c =>
        [
            Throws<ArgumentException>("a destination one byte short", () => AppendLog.WriteFrame(new byte[10], new byte[AppendLog.GetMaxFrameLength(10) - 1])),
            Throws<ArgumentException>("an empty destination", () => AppendLog.WriteFrame([], [])),
        ];
        Rows["AppendLog.Append(SafeFileHandle, ReadOnlySpan<Byte>)"] = c =>
        [
            .. SpindleOnlyHandleCases(c, h => AppendLog.Append(h, [1, 2, 3])),
            Throws<ArgumentException>("a handle without O_APPEND", () => AppendLog.Append(c.Spindle.ReadWrite, [1, 2, 3])),
            Throws<ArgumentException>("a read-only handle", () => AppendLog.Append(c.Spindle.ReadOnly, [1, 2, 3])),
            // O_RDONLY | O_APPEND: appending is allowed, writing is not; the write fails as System.IO's does.
            SameAsSystemIo("a read-only handle opened with O_APPEND", () =>
            {
                using SafeFileHandle h = TestLibc.OpenWithFlags(c.SpindlePath, 0x400);
                AppendLog.Append(h, [1, 2, 3]);
            }, () =>
            {
                using SafeFileHandle h = TestLibc.OpenWithFlags(c.SystemPath, 0x400);
                System.IO.RandomAccess.Write(h, [1, 2, 3], 0);
            }),
        ];
        Rows["AppendLog.Append(Stream, ReadOnlySpan<Byte>)"] = c =>
        [
            Throws<ArgumentNullException>("null stream", () => AppendLog.Append((Stream)null!, [1])),
            Throws<NotSupportedException>("a read-only stream", () =>
            {
                using Stream s = c.OpenStream(spindle: true, FileAccess.Read);
                AppendLog.Append(s, [1]);
            }),
            Throws<ObjectDisposedException>("a disposed stream", () =>
            {
                Stream s = c.OpenStream(spindle: true, FileAccess.Write);
                s.Dispose();
                AppendLog.Append(s, [1]);
            }),
        ];
        // Any bytes are contents to scan: damage is reported, not thrown.
        Rows["AppendLog.Scan(ReadOnlyMemory<Byte>)"] = Nothing;
        Rows["AppendLog.ReadAll(String)"] = c =>
        [
            SameAsSystemIo("null path", () => AppendLog.ReadAll(null!), () => File.ReadAllBytes(null!)),
            SameAsSystemIo("empty path", () => AppendLog.ReadAll(""), () => File.ReadAllBytes("")),
            SameAsSystemIo("a missing file", () => AppendLog.ReadAll(c.Missing), () => File.ReadAllBytes(c.Missing)),
            SameAsSystemIo("a directory", () => AppendLog.ReadAll(c.DirectoryPath), () => File.ReadAllBytes(c.DirectoryPath)),
        ];
        Rows["AppendLogReader..ctor(Stream, Boolean)"] = c =>
        [
            Throws<ArgumentNullException>("null stream", () => _ = new AppendLogReader((Stream)null!)),
            SameAsSystemIo("a write-only stream", () =>
            {
                using Stream s = c.OpenStream(spindle: true, FileAccess.Write);
                _ = new AppendLogReader(s);
            }, () =>
            {
                using Stream s = c.OpenStream(spindle: false, FileAccess.Write);
                _ = new StreamReader(s);
            }),
        ];
        Rows["AppendLogReader..ctor(String)"] = c =>
        [
            SameAsSystemIo("null path", () => _ = new AppendLogReader((string)null!), () => File.OpenRead(null!)),
            SameAsSystemIo("empty path", () => _ = new AppendLogReader(""), () => File.OpenRead("")),
            SameAsSystemIo("a missing file", () => _ = new AppendLogReader(c.Missing), () => File.OpenRead(c.Missing)),
            SameAsSystemIo("a directory", () => _ = new AppendLogReader(c.DirectoryPath), () => File.OpenRead(c.DirectoryPath)),
        ];
        Rows["AppendLogReader.Read()"] = c =>
        [
            Throws<ObjectDisposedException>("a disposed reader", () =>
            {
                var reader = new AppendLogReader(new MemoryStream());
                reader.Dispose();
                reader.Read();
            }),
        ];
        Rows["AppendLogReader.ReadAsync(CancellationToken)"] = c =>
        [
            Throws<ObjectDisposedException>("a disposed reader", () =>
            {
                var reader = new AppendLogReader(new MemoryStream());
                reader.Dispose();
                reader.ReadAsync().AsTask().GetAwaiter().GetResult();
            }),
            Throws<OperationCanceledException>("a cancelled token", () =>
            {
                using var reader = new AppendLogReader(new MemoryStream(new byte[100]));
                reader.ReadAsync(new CancellationToken(canceled: true)).AsTask().GetAwaiter().GetResult();
            }),
        ];
        Rows["AppendLogReader.get_Record()"] = Nothing;
        Rows["AppendLogReader.get_Damaged()"] = Nothing;
        Rows["AppendLogReader.Dispose()"] = Nothing;
        Rows["AppendLogScan.get_Records()"] = Nothing;
        Rows["AppendLogScan.get_Damaged()"] = Nothing;

        Rows["SpindleFile.GetDirectIOAlignment(SafeFileHandle)"] = c => SpindleOnlyHandleCases(c, h => SpindleFile.GetDirectIOAlignment(h));
        Rows["SpindleFile.IsDirectIO(SafeFileHandle)"] = c => SpindleOnlyHandleCases(c, h => SpindleFile.IsDirectIO(h));
        Rows["SpindleFile.Copy(String, String, Boolean)"] = c => CopyCases(c, (s, d, o) => SpindleFile.Copy(s, d, o), File.Copy);
        Rows["SpindleFile.CopyAsync(String, String, Boolean, IProgress<Int64>, CancellationToken)"] = c =>
        [
            .. CopyCases(c, (s, d, o) => SpindleFile.CopyAsync(s, d, o).GetAwaiter().GetResult(), File.Copy),
            Throws<OperationCanceledException>("a cancelled token", () => SpindleFile.CopyAsync(c.SpindlePath, c.Missing, false, null, new CancellationToken(canceled: true)).GetAwaiter().GetResult()),
        ];

        foreach (string flag in (string[])["ReadFastPath", "DirectIO", "DirectIOFallback", "AtomicAppend"])
        {
            // Booleans: every value is valid; contradictions are refused when opening (see the OpenHandle and stream rows).
            Rows[$"SpindleFileOptions.get_{flag}()"] = Nothing;
            Rows[$"SpindleFileOptions.set_{flag}(Boolean)"] = Nothing;
        }

        Rows["SpindleRandomAccess.get_DefaultEngine()"] = Nothing;
        Rows["SpindleRandomAccess.get_IsIoUringAvailable()"] = Nothing;
        Rows["SpindleRandomAccess.RunCompletionsInline()"] = Nothing;
        Rows["SpindleRandomAccess.PollCompletions()"] = Nothing;
        Rows["InlineCompletionScope.Dispose()"] = _ =>
        [
            Throws<InvalidOperationException>("disposed on another thread than the one that began it", () =>
            {
                InlineCompletionScope scope = SpindleRandomAccess.RunCompletionsInline();
                Exception? error = null;
                var other = new Thread(() =>
                {
                    try
                    {
                        scope.Dispose();
                    }
                    catch (Exception e)
                    {
                        error = e;
                    }
                });
                other.Start();
                other.Join();
                scope.Dispose();
                if (error is not null)
                {
                    throw error;
                }
            }),
        ];
        Rows["SpindleRandomAccess.FlushToDiskAsync(SafeFileHandle, CancellationToken)"] = c =>
        [
            .. SpindleOnlyHandleCases(c, h => Wait(SpindleRandomAccess.FlushToDiskAsync(h))),
            Throws<OperationCanceledException>("a cancelled token", () => Wait(SpindleRandomAccess.FlushToDiskAsync(c.Spindle.ReadWrite, new CancellationToken(canceled: true)))),
        ];
        Rows["SpindleRandomAccess.FlushToDiskAsync(SafeFileHandle, IoEngine, CancellationToken)"] = c =>
        [
            .. Enum.GetValues<IoEngine>().SelectMany(e => SpindleOnlyHandleCases(c, h => Wait(SpindleRandomAccess.FlushToDiskAsync(h, e))).Select(k => k with { Input = $"{k.Input} on {e}" })),
            .. Enum.GetValues<IoEngine>().Select(e => Throws<OperationCanceledException>($"a cancelled token on {e}",
                () => Wait(SpindleRandomAccess.FlushToDiskAsync(c.Spindle.ReadWrite, e, new CancellationToken(canceled: true))))),
            Throws<ArgumentOutOfRangeException>("engine 99", () => Wait(SpindleRandomAccess.FlushToDiskAsync(c.Spindle.ReadWrite, (IoEngine)99))),
        ];

        // Direct I/O: the buffer's address and length must be aligned too (checked before any system call).
        foreach (string key in Rows.Keys.Where(k => k.StartsWith("SpindleRandomAccess.Read", StringComparison.Ordinal) || k.StartsWith("SpindleRandomAccess.Write", StringComparison.Ordinal)).ToArray())
        {
            Row row = Rows[key];
            bool write = key.StartsWith("SpindleRandomAccess.Write", StringComparison.Ordinal);
            Rows[key] = c => [.. row(c), .. MisalignedBufferCases(c, write, key.Contains("IReadOnlyList", StringComparison.Ordinal), key.Contains("Async", StringComparison.Ordinal))];
        }
    }

    private static IEnumerable<BadInputCase> MisalignedBufferCases(BadInputContext c, bool write, bool list, bool async)
    {
        Memory<byte> aligned = c.Aligned.Memory;
        (string Input, Memory<byte> Buffer)[] inputs = [("direct I/O, misaligned address", aligned.Slice(1, 4096)), ("direct I/O, misaligned length", aligned[..4097])];
        foreach (var (input, buffer) in inputs)
        {
            yield return Throws<ArgumentException>(input, () =>
            {
                switch ((write, list, async))
                {
                    case (false, false, false): SpindleRandomAccess.Read(c.Direct, buffer.Span, 0); break;
                    case (false, true, false): SpindleRandomAccess.Read(c.Direct, [buffer], 0); break;
                    case (false, false, true): Wait(SpindleRandomAccess.ReadAsync(c.Direct, buffer, 0)); break;
                    case (false, true, true): Wait(SpindleRandomAccess.ReadAsync(c.Direct, [buffer], 0)); break;
                    case (true, false, false): SpindleRandomAccess.Write(c.Direct, buffer.Span, 0); break;
                    case (true, true, false): SpindleRandomAccess.Write(c.Direct, [(ReadOnlyMemory<byte>)buffer], 0); break;
                    case (true, false, true): Wait(SpindleRandomAccess.WriteAsync(c.Direct, buffer, 0)); break;
                    case (true, true, true): Wait(SpindleRandomAccess.WriteAsync(c.Direct, [(ReadOnlyMemory<byte>)buffer], 0)); break;
                }
            });
        }
    }

    private static IEnumerable<BadInputCase> SpindleOnlyHandleCases(BadInputContext c, Action<SafeFileHandle> spindle)
    {
        yield return Throws<ArgumentNullException>("null handle", () => spindle(null!));
        yield return Throws<ArgumentException>("invalid handle", () => spindle(c.Invalid));
        yield return Throws<ObjectDisposedException>("closed handle", () => spindle(c.Spindle.Closed));
    }

    private static IEnumerable<BadInputCase> CopyCases(BadInputContext c, Action<string, string, bool> spindle, Action<string, string, bool> system)
    {
        // Each side copies within its own files; the destination is one of the context's files, which must stay unchanged.
        (string Input, string Source, string Destination, bool Overwrite)[] inputs =
        [
            ("null source", "null", "new", false), ("null destination", "@", "null", false), ("empty source", "", "new", false),
            ("empty destination", "@", "", false), ("source with NUL", "a\0b", "new", false), ("a missing source", "missing", "new", false),
            ("a directory as source", "dir", "new", false), ("an existing destination without overwrite", "other", "@", false),
            ("the same file", "@", "@", true), ("a directory as destination", "@", "dir", true), ("a destination in a missing directory", "@", "missing/x", false),
        ];
        foreach (var i in inputs)
        {
            string Resolve(string value, string file, string other) => value switch
            {
                "null" => null!, "@" => file, "dir" => c.DirectoryPath, "missing" => c.Missing, "missing/x" => Path.Combine(c.Missing, "x"),
                "new" => file + ".copy", "other" => other, _ => value,
            };
            yield return SameAsSystemIo(i.Input,
                () => spindle(Resolve(i.Source, c.SpindlePath, c.SystemPath), Resolve(i.Destination, c.SpindlePath, c.SystemPath), i.Overwrite),
                () => system(Resolve(i.Source, c.SystemPath, c.SpindlePath), Resolve(i.Destination, c.SystemPath, c.SpindlePath), i.Overwrite));
        }
    }
}
