using static Spindle.Tests.Reliability.BadInput.BadInputCase;

namespace Spindle.Tests.Reliability.BadInput;

/// <summary>The rows of <see cref="SpindleFileStream"/>: each case runs on a fresh FileStream and a fresh SpindleFileStream.</summary>
public static partial class BadInputTable
{
    private static readonly byte[] Ten = new byte[10];

    /// <summary>A case run on a new stream of each library (disposed first when asked), compared with System.IO.</summary>
    private static BadInputCase OnStream(BadInputContext c, string input, Action<Stream> act, FileAccess access = FileAccess.ReadWrite, bool disposed = false, Type? expected = null)
    {
        Action Run(bool spindle) => () =>
        {
            Stream stream = c.OpenStream(spindle, access);
            try
            {
                if (disposed)
                {
                    stream.Dispose();
                }
                act(stream);
            }
            finally
            {
                stream.Dispose();
            }
        };
        return new BadInputCase(input, Run(true), Run(false), expected);
    }

    private static IEnumerable<BadInputCase> Disposed(BadInputContext c, Action<Stream> act) =>
        [OnStream(c, "disposed stream", act, disposed: true, expected: typeof(ObjectDisposedException))];

    private static IEnumerable<BadInputCase> ArrayCases(BadInputContext c, Action<Stream, byte[], int, int> act, FileAccess wrongAccess)
    {
        yield return OnStream(c, "null buffer", s => act(s, null!, 0, 0), expected: typeof(ArgumentNullException));
        yield return OnStream(c, "offset -1", s => act(s, Ten, -1, 1), expected: typeof(ArgumentOutOfRangeException));
        yield return OnStream(c, "count -1", s => act(s, Ten, 0, -1), expected: typeof(ArgumentOutOfRangeException));
        // .NET 10 names "count" in an ArgumentOutOfRangeException here: whatever System.IO says.
        yield return OnStream(c, "offset + count beyond the array", s => act(s, Ten, 5, 6));
        yield return OnStream(c, "offset int.MaxValue", s => act(s, Ten, int.MaxValue, 1));
        yield return OnStream(c, $"a stream opened for {wrongAccess} only", s => act(s, Ten, 0, 1), access: wrongAccess, expected: typeof(NotSupportedException));
        yield return OnStream(c, "disposed stream", s => act(s, Ten, 0, 1), disposed: true, expected: typeof(ObjectDisposedException));
    }

    private static IEnumerable<BadInputCase> SpanCases(BadInputContext c, Action<Stream> act, FileAccess wrongAccess, CancellationToken? cancelled = null)
    {
        yield return OnStream(c, $"a stream opened for {wrongAccess} only", act, access: wrongAccess, expected: typeof(NotSupportedException));
        yield return OnStream(c, "disposed stream", act, disposed: true, expected: typeof(ObjectDisposedException));
    }

    private static IEnumerable<BadInputCase> CancelledCase(BadInputContext c, Action<Stream, CancellationToken> act) =>
        [OnStream(c, "a cancelled token", s => act(s, new CancellationToken(canceled: true)))];

    private static IEnumerable<BadInputCase> PathConstructorCases(BadInputContext c, Func<string, FileMode, Stream> spindle, Func<string, FileMode, Stream> system)
    {
        (string Input, string Path, FileMode Mode)[] inputs =
        [
            ("null path", null!, FileMode.Open), ("empty path", "", FileMode.Open), ("path with NUL", "a\0b", FileMode.Open),
            ("mode 0", "@", 0), ("mode 99", "@", (FileMode)99), ("a missing file", "missing", FileMode.Open),
            ("a directory", "dir", FileMode.Open), ("CreateNew on an existing file", "@", FileMode.CreateNew),
        ];
        foreach (var i in inputs)
        {
            string Resolve(string file) => i.Path switch { "@" => file, "dir" => c.DirectoryPath, "missing" => c.Missing, _ => i.Path };
            yield return SameAsSystemIo(i.Input, () => spindle(Resolve(c.SpindlePath), i.Mode).Dispose(), () => system(Resolve(c.SystemPath), i.Mode).Dispose());
        }
    }

    private static void AddStreamRows()
    {
        Rows["SpindleFileStream..ctor(String, SpindleFileOptions)"] = c =>
        [
            .. PathConstructorCases(c, (p, m) => new SpindleFileStream(p, new SpindleFileOptions { Mode = m, Access = FileAccess.ReadWrite }),
                (p, m) => new FileStream(p, new FileStreamOptions { Mode = m, Access = FileAccess.ReadWrite })),
            Throws<ArgumentNullException>("null options", () => new SpindleFileStream(c.SpindlePath, (SpindleFileOptions)null!), () => new FileStream(c.SystemPath, (FileStreamOptions)null!)),
            SameAsSystemIo("Truncate with read access", () => new SpindleFileStream(c.SpindlePath, new SpindleFileOptions { Mode = FileMode.Truncate }).Dispose(),
                () => new FileStream(c.SystemPath, new FileStreamOptions { Mode = FileMode.Truncate }).Dispose()),
            SameAsSystemIo("Append with read-write access", () => new SpindleFileStream(c.SpindlePath, new SpindleFileOptions { Mode = FileMode.Append, Access = FileAccess.ReadWrite }).Dispose(),
                () => new FileStream(c.SystemPath, new FileStreamOptions { Mode = FileMode.Append, Access = FileAccess.ReadWrite }).Dispose()),
            Throws<ArgumentException>("atomic append with read access",
                () => new SpindleFileStream(c.SpindlePath, new SpindleFileOptions { Mode = FileMode.Open, Access = FileAccess.Read, AtomicAppend = true }).Dispose()),
            Throws<ArgumentException>("atomic append with direct I/O",
                () => new SpindleFileStream(c.SpindlePath, new SpindleFileOptions { Mode = FileMode.Open, Access = FileAccess.Write, AtomicAppend = true, DirectIO = true }).Dispose()),
        ];
        Rows["SpindleFileStream..ctor(String, FileStreamOptions)"] = c =>
        [
            .. PathConstructorCases(c, (p, m) => new SpindleFileStream(p, new FileStreamOptions { Mode = m, Access = FileAccess.ReadWrite }),
                (p, m) => new FileStream(p, new FileStreamOptions { Mode = m, Access = FileAccess.ReadWrite })),
            Throws<ArgumentNullException>("null options", () => new SpindleFileStream(c.SpindlePath, (FileStreamOptions)null!), () => new FileStream(c.SystemPath, (FileStreamOptions)null!)),
            SameAsSystemIo("Truncate with read access", () => new SpindleFileStream(c.SpindlePath, new FileStreamOptions { Mode = FileMode.Truncate }).Dispose(),
                () => new FileStream(c.SystemPath, new FileStreamOptions { Mode = FileMode.Truncate }).Dispose()),
            SameAsSystemIo("UnixCreateMode with FileMode.Open", () => new SpindleFileStream(c.SpindlePath, new FileStreamOptions { Mode = FileMode.Open, UnixCreateMode = UnixFileMode.UserRead }).Dispose(),
                () => new FileStream(c.SystemPath, new FileStreamOptions { Mode = FileMode.Open, UnixCreateMode = UnixFileMode.UserRead }).Dispose()),
        ];
        Rows["SpindleFileStream..ctor(String, FileMode)"] = c => PathConstructorCases(c, (p, m) => new SpindleFileStream(p, m), (p, m) => new FileStream(p, m));
        Rows["SpindleFileStream..ctor(String, FileMode, FileAccess)"] = c =>
        [
            .. PathConstructorCases(c, (p, m) => new SpindleFileStream(p, m, FileAccess.ReadWrite), (p, m) => new FileStream(p, m, FileAccess.ReadWrite)),
            SameAsSystemIo("access 0", () => new SpindleFileStream(c.SpindlePath, FileMode.Open, 0).Dispose(), () => new FileStream(c.SystemPath, FileMode.Open, 0).Dispose()),
            SameAsSystemIo("Truncate with read access", () => new SpindleFileStream(c.SpindlePath, FileMode.Truncate, FileAccess.Read).Dispose(), () => new FileStream(c.SystemPath, FileMode.Truncate, FileAccess.Read).Dispose()),
        ];
        Rows["SpindleFileStream..ctor(String, FileMode, FileAccess, FileShare)"] = c =>
        [
            .. PathConstructorCases(c, (p, m) => new SpindleFileStream(p, m, FileAccess.ReadWrite, FileShare.ReadWrite), (p, m) => new FileStream(p, m, FileAccess.ReadWrite, FileShare.ReadWrite)),
            SameAsSystemIo("share 0x40", () => new SpindleFileStream(c.SpindlePath, FileMode.Open, FileAccess.Read, (FileShare)0x40).Dispose(), () => new FileStream(c.SystemPath, FileMode.Open, FileAccess.Read, (FileShare)0x40).Dispose()),
        ];
        Rows["SpindleFileStream..ctor(String, FileMode, FileAccess, FileShare, Int32)"] = c =>
        [
            .. PathConstructorCases(c, (p, m) => new SpindleFileStream(p, m, FileAccess.ReadWrite, FileShare.ReadWrite, 4096), (p, m) => new FileStream(p, m, FileAccess.ReadWrite, FileShare.ReadWrite, 4096)),
            SameAsSystemIo("buffer size -1", () => new SpindleFileStream(c.SpindlePath, FileMode.Open, FileAccess.Read, FileShare.ReadWrite, -1).Dispose(), () => new FileStream(c.SystemPath, FileMode.Open, FileAccess.Read, FileShare.ReadWrite, -1).Dispose()),
        ];
        Rows["SpindleFileStream..ctor(String, FileMode, FileAccess, FileShare, Int32, Boolean)"] = c =>
        [
            .. PathConstructorCases(c, (p, m) => new SpindleFileStream(p, m, FileAccess.ReadWrite, FileShare.ReadWrite, 4096, true), (p, m) => new FileStream(p, m, FileAccess.ReadWrite, FileShare.ReadWrite, 4096, true)),
            SameAsSystemIo("buffer size -1", () => new SpindleFileStream(c.SpindlePath, FileMode.Open, FileAccess.Read, FileShare.ReadWrite, -1, true).Dispose(), () => new FileStream(c.SystemPath, FileMode.Open, FileAccess.Read, FileShare.ReadWrite, -1, true).Dispose()),
        ];
        Rows["SpindleFileStream..ctor(String, FileMode, FileAccess, FileShare, Int32, FileOptions)"] = c =>
        [
            .. PathConstructorCases(c, (p, m) => new SpindleFileStream(p, m, FileAccess.ReadWrite, FileShare.ReadWrite, 4096, FileOptions.None), (p, m) => new FileStream(p, m, FileAccess.ReadWrite, FileShare.ReadWrite, 4096, FileOptions.None)),
            SameAsSystemIo("undefined option 1", () => new SpindleFileStream(c.SpindlePath, FileMode.Open, FileAccess.Read, FileShare.ReadWrite, 4096, (FileOptions)1).Dispose(), () => new FileStream(c.SystemPath, FileMode.Open, FileAccess.Read, FileShare.ReadWrite, 4096, (FileOptions)1).Dispose()),
            SameAsSystemIo("buffer size -1", () => new SpindleFileStream(c.SpindlePath, FileMode.Open, FileAccess.Read, FileShare.ReadWrite, -1, FileOptions.None).Dispose(), () => new FileStream(c.SystemPath, FileMode.Open, FileAccess.Read, FileShare.ReadWrite, -1, FileOptions.None).Dispose()),
        ];
        Rows["SpindleFileStream..ctor(SafeFileHandle, FileAccess)"] = c =>
        [
            Throws<ArgumentNullException>("null handle", () => new SpindleFileStream(null!, FileAccess.Read)),
            Throws<ArgumentException>("invalid handle", () => new SpindleFileStream(c.Invalid, FileAccess.Read), () => new FileStream(c.Invalid, FileAccess.Read)),
            Throws<ObjectDisposedException>("closed handle", () => new SpindleFileStream(c.Spindle.Closed, FileAccess.Read), () => new FileStream(c.System.Closed, FileAccess.Read)),
            SameAsSystemIo("access 0", () => new SpindleFileStream(c.Spindle.ReadWrite, 0), () => new FileStream(c.System.ReadWrite, 0)),
        ];
        Rows["SpindleFileStream..ctor(SafeFileHandle, FileAccess, Int32)"] = c =>
        [
            // FileStream(null, ...) throws NullReferenceException in .NET 10; Spindle documents ArgumentNullException.
            Throws<ArgumentNullException>("null handle", () => new SpindleFileStream(null!, FileAccess.Read, 4096)),
            Throws<ArgumentException>("invalid handle", () => new SpindleFileStream(c.Invalid, FileAccess.Read, 4096), () => new FileStream(c.Invalid, FileAccess.Read, 4096)),
            Throws<ObjectDisposedException>("closed handle", () => new SpindleFileStream(c.Spindle.Closed, FileAccess.Read, 4096), () => new FileStream(c.System.Closed, FileAccess.Read, 4096)),
            SameAsSystemIo("access 0", () => new SpindleFileStream(c.Spindle.ReadWrite, 0, 4096), () => new FileStream(c.System.ReadWrite, 0, 4096)),
            SameAsSystemIo("buffer size -1", () => new SpindleFileStream(c.Spindle.ReadWrite, FileAccess.Read, -1), () => new FileStream(c.System.ReadWrite, FileAccess.Read, -1)),
        ];
        Rows["SpindleFileStream..ctor(SafeFileHandle, FileAccess, Int32, Boolean)"] = c =>
        [
            Throws<ArgumentNullException>("null handle", () => new SpindleFileStream(null!, FileAccess.Read, 4096, false)),
            Throws<ObjectDisposedException>("closed handle", () => new SpindleFileStream(c.Spindle.Closed, FileAccess.Read, 4096, false), () => new FileStream(c.System.Closed, FileAccess.Read, 4096, false)),
            SameAsSystemIo("isAsync true on a synchronous handle", () => new SpindleFileStream(c.Spindle.ReadOnly, FileAccess.Read, 4096, true), () => new FileStream(c.System.ReadOnly, FileAccess.Read, 4096, true)),
            SameAsSystemIo("buffer size -1", () => new SpindleFileStream(c.Spindle.ReadOnly, FileAccess.Read, -1, false), () => new FileStream(c.System.ReadOnly, FileAccess.Read, -1, false)),
        ];

        Rows["SpindleFileStream.get_Engine()"] = Nothing; // Spindle's own; a disposed stream still says which engine it used
        Rows["SpindleFileStream.get_IsAsync()"] = c => [OnStream(c, "disposed stream", s => _ = s is FileStream f ? f.IsAsync : ((SpindleFileStream)s).IsAsync, disposed: true)];
        Rows["SpindleFileStream.get_Name()"] = c => [OnStream(c, "disposed stream", s => _ = s is FileStream f ? f.Name : ((SpindleFileStream)s).Name, disposed: true)];
        Rows["SpindleFileStream.get_SafeFileHandle()"] = c => [OnStream(c, "disposed stream", s => _ = s is FileStream f ? f.SafeFileHandle : ((SpindleFileStream)s).SafeFileHandle, disposed: true)];
        Rows["SpindleFileStream.get_CanRead()"] = c => [OnStream(c, "disposed stream", s => _ = s.CanRead, disposed: true)];
        Rows["SpindleFileStream.get_CanWrite()"] = c => [OnStream(c, "disposed stream", s => _ = s.CanWrite, disposed: true)];
        Rows["SpindleFileStream.get_CanSeek()"] = c => [OnStream(c, "disposed stream", s => _ = s.CanSeek, disposed: true)];
        Rows["SpindleFileStream.get_Length()"] = c => Disposed(c, s => _ = s.Length);
        Rows["SpindleFileStream.get_Position()"] = c => Disposed(c, s => _ = s.Position);
        Rows["SpindleFileStream.set_Position(Int64)"] = c =>
        [
            .. Disposed(c, s => s.Position = 0),
            OnStream(c, "-1", s => s.Position = -1, expected: typeof(ArgumentOutOfRangeException)),
            OnStream(c, "long.MinValue", s => s.Position = long.MinValue, expected: typeof(ArgumentOutOfRangeException)),
        ];
        Rows["SpindleFileStream.Seek(Int64, SeekOrigin)"] = c =>
        [
            .. Disposed(c, s => s.Seek(0, SeekOrigin.Begin)),
            OnStream(c, "origin 3", s => s.Seek(0, (SeekOrigin)3), expected: typeof(ArgumentException)),
            OnStream(c, "before the beginning", s => s.Seek(-1, SeekOrigin.Begin), expected: typeof(IOException)),
            OnStream(c, "long.MinValue from the end", s => s.Seek(long.MinValue, SeekOrigin.End)),
            OnStream(c, "long.MaxValue from the end", s => s.Seek(long.MaxValue, SeekOrigin.End)),
        ];
        Rows["SpindleFileStream.SetLength(Int64)"] = c =>
        [
            .. Disposed(c, s => s.SetLength(0)),
            OnStream(c, "-1", s => s.SetLength(-1), expected: typeof(ArgumentOutOfRangeException)),
            OnStream(c, "long.MaxValue", s => s.SetLength(long.MaxValue), expected: typeof(ArgumentOutOfRangeException)),
            OnStream(c, "a read-only stream", s => s.SetLength(5), access: FileAccess.Read, expected: typeof(NotSupportedException)),
        ];
        Rows["SpindleFileStream.Read(Byte[], Int32, Int32)"] = c => ArrayCases(c, (s, b, o, n) => s.Read(b, o, n), FileAccess.Write);
        Rows["SpindleFileStream.Read(Span<Byte>)"] = c => SpanCases(c, s => s.Read(new byte[10].AsSpan()), FileAccess.Write);
        Rows["SpindleFileStream.ReadByte()"] = c => SpanCases(c, s => s.ReadByte(), FileAccess.Write);
        Rows["SpindleFileStream.Write(Byte[], Int32, Int32)"] = c => ArrayCases(c, (s, b, o, n) => s.Write(b, o, n), FileAccess.Read);
        Rows["SpindleFileStream.Write(ReadOnlySpan<Byte>)"] = c => SpanCases(c, s => s.Write(new byte[10].AsSpan()), FileAccess.Read);
        Rows["SpindleFileStream.WriteByte(Byte)"] = c => SpanCases(c, s => s.WriteByte(1), FileAccess.Read);
        Rows["SpindleFileStream.ReadAsync(Byte[], Int32, Int32, CancellationToken)"] = c =>
        [
            .. ArrayCases(c, (s, b, o, n) => s.ReadAsync(b, o, n).GetAwaiter().GetResult(), FileAccess.Write),
            .. CancelledCase(c, (s, t) => s.ReadAsync(Ten, 0, 10, t).GetAwaiter().GetResult()),
        ];
        Rows["SpindleFileStream.ReadAsync(Memory<Byte>, CancellationToken)"] = c =>
        [
            .. SpanCases(c, s => Wait(s.ReadAsync(new byte[10].AsMemory())), FileAccess.Write),
            .. CancelledCase(c, (s, t) => Wait(s.ReadAsync(new byte[10].AsMemory(), t))),
        ];
        Rows["SpindleFileStream.WriteAsync(Byte[], Int32, Int32, CancellationToken)"] = c =>
        [
            .. ArrayCases(c, (s, b, o, n) => s.WriteAsync(b, o, n).GetAwaiter().GetResult(), FileAccess.Read),
            .. CancelledCase(c, (s, t) => s.WriteAsync(Ten, 0, 10, t).GetAwaiter().GetResult()),
        ];
        Rows["SpindleFileStream.WriteAsync(ReadOnlyMemory<Byte>, CancellationToken)"] = c =>
        [
            .. SpanCases(c, s => Wait(s.WriteAsync(new byte[10].AsMemory())), FileAccess.Read),
            .. CancelledCase(c, (s, t) => Wait(s.WriteAsync(new byte[10].AsMemory(), t))),
        ];
        Rows["SpindleFileStream.BeginRead(Byte[], Int32, Int32, AsyncCallback, Object)"] = c =>
            ArrayCases(c, (s, b, o, n) => s.EndRead(s.BeginRead(b, o, n, null, null)), FileAccess.Write);
        Rows["SpindleFileStream.EndRead(IAsyncResult)"] = c =>
        [
            OnStream(c, "null", s => s.EndRead(null!), expected: typeof(ArgumentNullException)),
            OnStream(c, "a foreign IAsyncResult", s => s.EndRead(Task.CompletedTask)),
        ];
        Rows["SpindleFileStream.BeginWrite(Byte[], Int32, Int32, AsyncCallback, Object)"] = c =>
            ArrayCases(c, (s, b, o, n) => s.EndWrite(s.BeginWrite(b, o, n, null, null)), FileAccess.Read);
        Rows["SpindleFileStream.EndWrite(IAsyncResult)"] = c =>
        [
            OnStream(c, "null", s => s.EndWrite(null!), expected: typeof(ArgumentNullException)),
            OnStream(c, "a foreign IAsyncResult", s => s.EndWrite(Task.CompletedTask)),
        ];
        Rows["SpindleFileStream.Flush()"] = c => Disposed(c, s => s.Flush());
        Rows["SpindleFileStream.Flush(Boolean)"] = c => Disposed(c, s => { if (s is FileStream f) f.Flush(true); else ((SpindleFileStream)s).Flush(true); });
        Rows["SpindleFileStream.FlushAsync(CancellationToken)"] = c =>
        [
            .. Disposed(c, s => s.FlushAsync().GetAwaiter().GetResult()),
            .. CancelledCase(c, (s, t) => s.FlushAsync(t).GetAwaiter().GetResult()),
        ];
        Rows["SpindleFileStream.CopyTo(Stream, Int32)"] = c =>
        [
            .. Disposed(c, s => s.CopyTo(new MemoryStream(), 4096)),
            OnStream(c, "null destination", s => s.CopyTo(null!, 4096), expected: typeof(ArgumentNullException)),
            OnStream(c, "buffer size 0", s => s.CopyTo(new MemoryStream(), 0), expected: typeof(ArgumentOutOfRangeException)),
            OnStream(c, "a write-only source", s => s.CopyTo(new MemoryStream(), 4096), access: FileAccess.Write, expected: typeof(NotSupportedException)),
            OnStream(c, "a read-only destination", s => s.CopyTo(new MemoryStream(new byte[10], writable: false), 4096), expected: typeof(NotSupportedException)),
        ];
        Rows["SpindleFileStream.CopyToAsync(Stream, Int32, CancellationToken)"] = c =>
        [
            .. Disposed(c, s => s.CopyToAsync(new MemoryStream(), 4096).GetAwaiter().GetResult()),
            OnStream(c, "null destination", s => s.CopyToAsync(null!, 4096).GetAwaiter().GetResult(), expected: typeof(ArgumentNullException)),
            OnStream(c, "buffer size 0", s => s.CopyToAsync(new MemoryStream(), 0).GetAwaiter().GetResult(), expected: typeof(ArgumentOutOfRangeException)),
            OnStream(c, "a write-only source", s => s.CopyToAsync(new MemoryStream(), 4096).GetAwaiter().GetResult(), access: FileAccess.Write, expected: typeof(NotSupportedException)),
            .. CancelledCase(c, (s, t) => s.CopyToAsync(new MemoryStream(), 4096, t).GetAwaiter().GetResult()),
        ];
        Rows["SpindleFileStream.Lock(Int64, Int64)"] = c =>
        [
            .. Disposed(c, s => Lock(s, 0, 1)),
            OnStream(c, "position -1", s => Lock(s, -1, 1), expected: typeof(ArgumentOutOfRangeException)),
            OnStream(c, "length -1", s => Lock(s, 0, -1), expected: typeof(ArgumentOutOfRangeException)),
        ];
        Rows["SpindleFileStream.Unlock(Int64, Int64)"] = c =>
        [
            .. Disposed(c, s => Unlock(s, 0, 1)),
            OnStream(c, "position -1", s => Unlock(s, -1, 1), expected: typeof(ArgumentOutOfRangeException)),
            OnStream(c, "length -1", s => Unlock(s, 0, -1), expected: typeof(ArgumentOutOfRangeException)),
        ];
        Rows["SpindleFileStream.DisposeAsync()"] = c => [OnStream(c, "disposed twice", s => Wait(s.DisposeAsync()), disposed: true)];
    }

    private static void Lock(Stream s, long position, long length)
    {
        if (s is FileStream f) f.Lock(position, length); else ((SpindleFileStream)s).Lock(position, length);
    }

    private static void Unlock(Stream s, long position, long length)
    {
        if (s is FileStream f) f.Unlock(position, length); else ((SpindleFileStream)s).Unlock(position, length);
    }
}
