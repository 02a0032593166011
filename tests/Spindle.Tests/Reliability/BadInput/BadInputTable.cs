using System.Runtime.Versioning;
using Microsoft.Win32.SafeHandles;
using static Spindle.Tests.Reliability.BadInput.BadInputCase;
using SysRandomAccess = System.IO.RandomAccess;

namespace Spindle.Tests.Reliability.BadInput;

/// <summary>
/// The rows of the bad-input test: one per public member of Spindle (see <see cref="PublicSurface"/>),
/// each listing the bad inputs that member must reject. A member with nothing to misuse (a getter, a
/// parameterless constructor) has a row with no cases, so that a new member cannot slip in unlisted.
/// </summary>
[SupportedOSPlatform("linux")]
public static partial class BadInputTable
{
    public delegate IEnumerable<BadInputCase> Row(BadInputContext c);

    private static readonly Row Nothing = _ => [];

    // Reported to the owner of SpindleFileOptions.cs (branch open): FileStreamOptions names the parameter "UnixCreateMode".
    private const string UnixCreateModeParamName = "SpindleFileOptions.UnixCreateMode's setter throws ArgumentException with ParamName \"UnixFileMode\"; System.IO says \"UnixCreateMode\"";

    public static readonly Dictionary<string, Row> Rows = new()
    {
        ["IoEngine (enum)"] = Nothing,

        // ---- SpindleFile ----
        ["SpindleFile.OpenHandle(String, FileMode, FileAccess, FileShare, FileOptions, Int64)"] = c => OpenHandleCases(c,
            (path, mode, access, share, options, preallocation) => SpindleFile.OpenHandle(path, mode, access, share, options, preallocation).Dispose()),
        ["SpindleFile.OpenHandle(String, SpindleFileOptions)"] = c =>
        [
            .. OpenHandleCases(c, (path, mode, access, share, options, preallocation) => SpindleFile.OpenHandle(path,
                new SpindleFileOptions { Mode = mode, Access = access, Share = share, Options = options, PreallocationSize = preallocation }).Dispose(),
                (path, mode, access, share, options, preallocation) =>
                {
                    // The options object's setters validate as FileStreamOptions' do; the open then validates the combination.
                    var o = new FileStreamOptions { Mode = mode, Access = access, Share = share, Options = options, PreallocationSize = preallocation };
                    File.OpenHandle(path, o.Mode, o.Access, o.Share, o.Options, o.PreallocationSize).Dispose();
                }),
            Throws<ArgumentNullException>("null options", () => SpindleFile.OpenHandle(c.SpindlePath, null!), () => new FileStream(c.SystemPath, (FileStreamOptions)null!)),
            Throws<ArgumentException>("UnixCreateMode with FileMode.Open",
                () => SpindleFile.OpenHandle(c.SpindlePath, new SpindleFileOptions { Mode = FileMode.Open, Access = FileAccess.ReadWrite, UnixCreateMode = UnixFileMode.UserRead }),
                () => new FileStream(c.SystemPath, new FileStreamOptions { Mode = FileMode.Open, Access = FileAccess.ReadWrite, UnixCreateMode = UnixFileMode.UserRead })),
            Throws<ArgumentException>("UnixCreateMode beyond the permission bits",
                () => SpindleFile.OpenHandle(c.Missing, new SpindleFileOptions { Mode = FileMode.CreateNew, Access = FileAccess.ReadWrite, UnixCreateMode = (UnixFileMode)0x1000 }),
                () => new FileStream(c.Missing, new FileStreamOptions { Mode = FileMode.CreateNew, Access = FileAccess.ReadWrite, UnixCreateMode = (UnixFileMode)0x1000 })) with { KnownBug = UnixCreateModeParamName },
        ],

        // ---- SpindleFileOptions: the setters validate as FileStreamOptions' do ----
        ["SpindleFileOptions..ctor()"] = Nothing,
        ["SpindleFileOptions..ctor(FileStreamOptions)"] = c =>
            [Throws<ArgumentNullException>("null", () => _ = new SpindleFileOptions(null!))],
        ["SpindleFileOptions.get_Mode()"] = Nothing,
        ["SpindleFileOptions.set_Mode(FileMode)"] = c =>
        [
            Throws<ArgumentOutOfRangeException>("0", () => new SpindleFileOptions().Mode = 0, () => new FileStreamOptions().Mode = 0),
            Throws<ArgumentOutOfRangeException>("7", () => new SpindleFileOptions().Mode = (FileMode)7, () => new FileStreamOptions().Mode = (FileMode)7),
            Throws<ArgumentOutOfRangeException>("int.MinValue", () => new SpindleFileOptions().Mode = (FileMode)int.MinValue, () => new FileStreamOptions().Mode = (FileMode)int.MinValue),
        ],
        ["SpindleFileOptions.get_Access()"] = Nothing,
        ["SpindleFileOptions.set_Access(FileAccess)"] = c =>
        [
            Throws<ArgumentOutOfRangeException>("0", () => new SpindleFileOptions().Access = 0, () => new FileStreamOptions().Access = 0),
            Throws<ArgumentOutOfRangeException>("4", () => new SpindleFileOptions().Access = (FileAccess)4, () => new FileStreamOptions().Access = (FileAccess)4),
        ],
        ["SpindleFileOptions.get_Share()"] = Nothing,
        ["SpindleFileOptions.set_Share(FileShare)"] = c =>
        [
            Throws<ArgumentOutOfRangeException>("-1", () => new SpindleFileOptions().Share = (FileShare)(-1), () => new FileStreamOptions().Share = (FileShare)(-1)),
            Throws<ArgumentOutOfRangeException>("0x20", () => new SpindleFileOptions().Share = (FileShare)0x20, () => new FileStreamOptions().Share = (FileShare)0x20),
        ],
        ["SpindleFileOptions.get_Options()"] = Nothing,
        ["SpindleFileOptions.set_Options(FileOptions)"] = c =>
        [
            Throws<ArgumentOutOfRangeException>("1", () => new SpindleFileOptions().Options = (FileOptions)1, () => new FileStreamOptions().Options = (FileOptions)1),
            Throws<ArgumentOutOfRangeException>("-1", () => new SpindleFileOptions().Options = (FileOptions)(-1), () => new FileStreamOptions().Options = (FileOptions)(-1)),
        ],
        ["SpindleFileOptions.get_PreallocationSize()"] = Nothing,
        ["SpindleFileOptions.set_PreallocationSize(Int64)"] = c =>
        [
            Throws<ArgumentOutOfRangeException>("-1", () => new SpindleFileOptions().PreallocationSize = -1, () => new FileStreamOptions().PreallocationSize = -1),
            Throws<ArgumentOutOfRangeException>("long.MinValue", () => new SpindleFileOptions().PreallocationSize = long.MinValue, () => new FileStreamOptions().PreallocationSize = long.MinValue),
        ],
        ["SpindleFileOptions.get_BufferSize()"] = Nothing,
        ["SpindleFileOptions.set_BufferSize(Int32)"] = c =>
        [
            Throws<ArgumentOutOfRangeException>("-1", () => new SpindleFileOptions().BufferSize = -1, () => new FileStreamOptions().BufferSize = -1),
        ],
        ["SpindleFileOptions.get_UnixCreateMode()"] = Nothing,
        // FileStreamOptions rejects bits beyond the permissions in the setter.
        ["SpindleFileOptions.set_UnixCreateMode(Nullable<UnixFileMode>)"] = c =>
        [
            SameAsSystemIo("0x1000", () => new SpindleFileOptions().UnixCreateMode = (UnixFileMode)0x1000, () => new FileStreamOptions().UnixCreateMode = (UnixFileMode)0x1000) with { KnownBug = UnixCreateModeParamName },
        ],
        ["SpindleFileOptions.get_Engine()"] = Nothing,
        ["SpindleFileOptions.set_Engine(IoEngine)"] = c =>
        [
            Throws<ArgumentOutOfRangeException>("-1", () => new SpindleFileOptions().Engine = (IoEngine)(-1)),
            Throws<ArgumentOutOfRangeException>("99", () => new SpindleFileOptions().Engine = (IoEngine)99),
        ],

        // ---- SpindleRandomAccess ----
        ["SpindleRandomAccess.Read(SafeFileHandle, Span<Byte>, Int64)"] = c => HandleOffsetCases(c, writes: false,
            (h, o) => SpindleRandomAccess.Read(h, new byte[10], o), (h, o) => SysRandomAccess.Read(h, new byte[10], o)),
        ["SpindleRandomAccess.Read(SafeFileHandle, IReadOnlyList<Memory<Byte>>, Int64)"] = c =>
        [
            .. HandleOffsetCases(c, writes: false, (h, o) => SpindleRandomAccess.Read(h, ReadBuffers(), o), (h, o) => SysRandomAccess.Read(h, ReadBuffers(), o)),
            Throws<ArgumentNullException>("null buffers", () => SpindleRandomAccess.Read(c.Spindle.ReadWrite, (IReadOnlyList<Memory<byte>>)null!, 0),
                () => SysRandomAccess.Read(c.System.ReadWrite, (IReadOnlyList<Memory<byte>>)null!, 0)),
        ],
        ["SpindleRandomAccess.Write(SafeFileHandle, ReadOnlySpan<Byte>, Int64)"] = c => HandleOffsetCases(c, writes: true,
            (h, o) => SpindleRandomAccess.Write(h, new byte[10], o), (h, o) => SysRandomAccess.Write(h, new byte[10], o)),
        ["SpindleRandomAccess.Write(SafeFileHandle, IReadOnlyList<ReadOnlyMemory<Byte>>, Int64)"] = c =>
        [
            .. HandleOffsetCases(c, writes: true, (h, o) => SpindleRandomAccess.Write(h, WriteBuffers(), o), (h, o) => SysRandomAccess.Write(h, WriteBuffers(), o)),
            Throws<ArgumentNullException>("null buffers", () => SpindleRandomAccess.Write(c.Spindle.ReadWrite, (IReadOnlyList<ReadOnlyMemory<byte>>)null!, 0),
                () => SysRandomAccess.Write(c.System.ReadWrite, (IReadOnlyList<ReadOnlyMemory<byte>>)null!, 0)),
        ],
        ["SpindleRandomAccess.ReadAsync(SafeFileHandle, Memory<Byte>, Int64, CancellationToken)"] = c => AsyncCases(c, writes: false,
            (h, o, t) => Wait(SpindleRandomAccess.ReadAsync(h, new byte[10], o, t)), (h, o, t) => Wait(SysRandomAccess.ReadAsync(h, new byte[10], o, t))),
        ["SpindleRandomAccess.ReadAsync(SafeFileHandle, Memory<Byte>, Int64, IoEngine, CancellationToken)"] = c => EngineCases(c, writes: false,
            (h, o, e, t) => Wait(SpindleRandomAccess.ReadAsync(h, new byte[10], o, e, t)), (h, o, t) => Wait(SysRandomAccess.ReadAsync(h, new byte[10], o, t))),
        ["SpindleRandomAccess.ReadAsync(SafeFileHandle, IReadOnlyList<Memory<Byte>>, Int64, CancellationToken)"] = c =>
        [
            .. AsyncCases(c, writes: false, (h, o, t) => Wait(SpindleRandomAccess.ReadAsync(h, ReadBuffers(), o, t)), (h, o, t) => Wait(SysRandomAccess.ReadAsync(h, ReadBuffers(), o, t))),
            Throws<ArgumentNullException>("null buffers", () => Wait(SpindleRandomAccess.ReadAsync(c.Spindle.ReadWrite, (IReadOnlyList<Memory<byte>>)null!, 0)),
                () => Wait(SysRandomAccess.ReadAsync(c.System.ReadWrite, (IReadOnlyList<Memory<byte>>)null!, 0))),
        ],
        ["SpindleRandomAccess.ReadAsync(SafeFileHandle, IReadOnlyList<Memory<Byte>>, Int64, IoEngine, CancellationToken)"] = c =>
        [
            .. EngineCases(c, writes: false, (h, o, e, t) => Wait(SpindleRandomAccess.ReadAsync(h, ReadBuffers(), o, e, t)), (h, o, t) => Wait(SysRandomAccess.ReadAsync(h, ReadBuffers(), o, t))),
            .. Enum.GetValues<IoEngine>().Select(e => Throws<ArgumentNullException>($"null buffers on {e}",
                () => Wait(SpindleRandomAccess.ReadAsync(c.Spindle.ReadWrite, (IReadOnlyList<Memory<byte>>)null!, 0, e)))),
        ],
        ["SpindleRandomAccess.WriteAsync(SafeFileHandle, ReadOnlyMemory<Byte>, Int64, CancellationToken)"] = c => AsyncCases(c, writes: true,
            (h, o, t) => Wait(SpindleRandomAccess.WriteAsync(h, new byte[10], o, t)), (h, o, t) => Wait(SysRandomAccess.WriteAsync(h, new byte[10], o, t))),
        ["SpindleRandomAccess.WriteAsync(SafeFileHandle, ReadOnlyMemory<Byte>, Int64, IoEngine, CancellationToken)"] = c => EngineCases(c, writes: true,
            (h, o, e, t) => Wait(SpindleRandomAccess.WriteAsync(h, new byte[10], o, e, t)), (h, o, t) => Wait(SysRandomAccess.WriteAsync(h, new byte[10], o, t))),
        ["SpindleRandomAccess.WriteAsync(SafeFileHandle, IReadOnlyList<ReadOnlyMemory<Byte>>, Int64, CancellationToken)"] = c =>
        [
            .. AsyncCases(c, writes: true, (h, o, t) => Wait(SpindleRandomAccess.WriteAsync(h, WriteBuffers(), o, t)), (h, o, t) => Wait(SysRandomAccess.WriteAsync(h, WriteBuffers(), o, t))),
            Throws<ArgumentNullException>("null buffers", () => Wait(SpindleRandomAccess.WriteAsync(c.Spindle.ReadWrite, (IReadOnlyList<ReadOnlyMemory<byte>>)null!, 0)),
                () => Wait(SysRandomAccess.WriteAsync(c.System.ReadWrite, (IReadOnlyList<ReadOnlyMemory<byte>>)null!, 0))),
        ],
        ["SpindleRandomAccess.WriteAsync(SafeFileHandle, IReadOnlyList<ReadOnlyMemory<Byte>>, Int64, IoEngine, CancellationToken)"] = c =>
        [
            .. EngineCases(c, writes: true, (h, o, e, t) => Wait(SpindleRandomAccess.WriteAsync(h, WriteBuffers(), o, e, t)), (h, o, t) => Wait(SysRandomAccess.WriteAsync(h, WriteBuffers(), o, t))),
            .. Enum.GetValues<IoEngine>().Select(e => Throws<ArgumentNullException>($"null buffers on {e}",
                () => Wait(SpindleRandomAccess.WriteAsync(c.Spindle.ReadWrite, (IReadOnlyList<ReadOnlyMemory<byte>>)null!, 0, e)))),
        ],
        ["SpindleRandomAccess.GetLength(SafeFileHandle)"] = c =>
        [
            .. HandleCases(c, h => SpindleRandomAccess.GetLength(h), h => SysRandomAccess.GetLength(h)),
            Throws<NotSupportedException>("socket", () => SpindleRandomAccess.GetLength(c.Socket), () => SysRandomAccess.GetLength(c.Socket)),
        ],
        ["SpindleRandomAccess.SetLength(SafeFileHandle, Int64)"] = c =>
        [
            .. HandleCases(c, h => SpindleRandomAccess.SetLength(h, 5), h => SysRandomAccess.SetLength(h, 5)),
            Throws<NotSupportedException>("socket", () => SpindleRandomAccess.SetLength(c.Socket, 5), () => SysRandomAccess.SetLength(c.Socket, 5)),
            Throws<ArgumentOutOfRangeException>("negative length", () => SpindleRandomAccess.SetLength(c.Spindle.ReadWrite, -1), () => SysRandomAccess.SetLength(c.System.ReadWrite, -1)),
            Throws<ArgumentOutOfRangeException>("long.MaxValue", () => SpindleRandomAccess.SetLength(c.Spindle.ReadWrite, long.MaxValue), () => SysRandomAccess.SetLength(c.System.ReadWrite, long.MaxValue)),
            SameAsSystemIo("read-only handle", () => SpindleRandomAccess.SetLength(c.Spindle.ReadOnly, 5), () => SysRandomAccess.SetLength(c.System.ReadOnly, 5)),
        ],
        ["SpindleRandomAccess.FlushToDisk(SafeFileHandle)"] = c =>
        [
            .. HandleCases(c, SpindleRandomAccess.FlushToDisk, SysRandomAccess.FlushToDisk),
            SameAsSystemIo("socket", () => SpindleRandomAccess.FlushToDisk(c.Socket), () => SysRandomAccess.FlushToDisk(c.Socket)),
        ],
    };

    private delegate void Open(string path, FileMode mode, FileAccess access, FileShare share, FileOptions options, long preallocation);

    private static IEnumerable<BadInputCase> OpenHandleCases(BadInputContext c, Open spindle, Open? system = null)
    {
        system ??= (path, mode, access, share, options, preallocation) => File.OpenHandle(path, mode, access, share, options, preallocation).Dispose();
        (string Input, string Path, FileMode Mode, FileAccess Access, FileShare Share, FileOptions Options, long Preallocation)[] inputs =
        [
            ("null path", null!, FileMode.Open, FileAccess.Read, FileShare.Read, FileOptions.None, 0),
            ("empty path", "", FileMode.Open, FileAccess.Read, FileShare.Read, FileOptions.None, 0),
            ("path with NUL", "a\0b", FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.Read, FileOptions.None, 0),
            ("mode 0", "@", 0, FileAccess.Read, FileShare.Read, FileOptions.None, 0),
            ("mode 99", "@", (FileMode)99, FileAccess.Read, FileShare.Read, FileOptions.None, 0),
            ("access 0", "@", FileMode.Open, 0, FileShare.Read, FileOptions.None, 0),
            ("share 0x40", "@", FileMode.Open, FileAccess.Read, (FileShare)0x40, FileOptions.None, 0),
            ("undefined option 1", "@", FileMode.Open, FileAccess.Read, FileShare.Read, (FileOptions)1, 0),
            ("negative preallocation", "@", FileMode.Create, FileAccess.Write, FileShare.Read, FileOptions.None, -1),
            ("Truncate with read access", "@", FileMode.Truncate, FileAccess.Read, FileShare.Read, FileOptions.None, 0),
            ("Create with read access", "@", FileMode.Create, FileAccess.Read, FileShare.Read, FileOptions.None, 0),
            ("Append with read-write access", "@", FileMode.Append, FileAccess.ReadWrite, FileShare.Read, FileOptions.None, 0),
            ("preallocation with read access", "@", FileMode.OpenOrCreate, FileAccess.Read, FileShare.Read, FileOptions.None, 4096),
            ("preallocation when opening an existing file", "@", FileMode.Open, FileAccess.ReadWrite, FileShare.Read, FileOptions.None, 4096),
            ("CreateNew on an existing file", "@", FileMode.CreateNew, FileAccess.ReadWrite, FileShare.Read, FileOptions.None, 0),
            ("a directory", "dir", FileMode.Open, FileAccess.Read, FileShare.Read, FileOptions.None, 0),
            ("a missing file", "missing", FileMode.Open, FileAccess.Read, FileShare.Read, FileOptions.None, 0),
            ("a missing directory", "missing/x", FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.Read, FileOptions.None, 0),
            ("a component too long", "long", FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.Read, FileOptions.None, 0),
            ("a preallocation larger than the file system", "missing", FileMode.CreateNew, FileAccess.Write, FileShare.Read, FileOptions.None, long.MaxValue),
        ];
        foreach (var i in inputs)
        {
            string Resolve(string file) => i.Path switch
            {
                "@" => file,
                "dir" => c.DirectoryPath,
                "missing" => c.Missing,
                "missing/x" => Path.Combine(c.Missing, "x"),
                "long" => Path.Combine(Path.GetDirectoryName(file)!, new string('n', 300)),
                _ => i.Path,
            };
            yield return SameAsSystemIo(i.Input,
                () => spindle(Resolve(c.SpindlePath), i.Mode, i.Access, i.Share, i.Options, i.Preallocation),
                () => system(Resolve(c.SystemPath), i.Mode, i.Access, i.Share, i.Options, i.Preallocation));
        }
    }

    private static IEnumerable<BadInputCase> HandleCases(BadInputContext c, Action<SafeFileHandle> spindle, Action<SafeFileHandle> system)
    {
        yield return Throws<ArgumentNullException>("null handle", () => spindle(null!), () => system(null!));
        yield return Throws<ArgumentException>("invalid handle", () => spindle(c.Invalid), () => system(c.Invalid));
        yield return Throws<ObjectDisposedException>("closed handle", () => spindle(c.Spindle.Closed), () => system(c.System.Closed));
    }

    private static IEnumerable<BadInputCase> HandleOffsetCases(BadInputContext c, bool writes, Action<SafeFileHandle, long> spindle, Action<SafeFileHandle, long> system)
    {
        foreach (BadInputCase @case in HandleCases(c, h => spindle(h, 0), h => system(h, 0)))
        {
            yield return @case;
        }
        yield return Throws<ArgumentOutOfRangeException>("offset -1", () => spindle(c.Spindle.ReadWrite, -1), () => system(c.System.ReadWrite, -1));
        yield return Throws<ArgumentOutOfRangeException>("offset long.MinValue", () => spindle(c.Spindle.ReadWrite, long.MinValue), () => system(c.System.ReadWrite, long.MinValue));
        yield return writes
            ? Throws<UnauthorizedAccessException>("read-only handle", () => spindle(c.Spindle.ReadOnly, 0), () => system(c.System.ReadOnly, 0))
            : Throws<UnauthorizedAccessException>("write-only handle", () => spindle(c.Spindle.WriteOnly, 0), () => system(c.System.WriteOnly, 0));
        yield return SameAsSystemIo("offset + length > long.MaxValue", () => spindle(c.Spindle.ReadWrite, long.MaxValue - 3), () => system(c.System.ReadWrite, long.MaxValue - 3));
        yield return SameAsSystemIo("offset beyond the largest file", () => spindle(c.Spindle.ReadWrite, 1L << 50), () => system(c.System.ReadWrite, 1L << 50));
    }

    private static IEnumerable<BadInputCase> AsyncCases(BadInputContext c, bool writes,
        Action<SafeFileHandle, long, CancellationToken> spindle, Action<SafeFileHandle, long, CancellationToken> system)
    {
        foreach (BadInputCase @case in HandleOffsetCases(c, writes, (h, o) => spindle(h, o, default), (h, o) => system(h, o, default)))
        {
            yield return @case;
        }
        var cancelled = new CancellationToken(canceled: true);
        // A call cancelled before it starts must not touch the file.
        yield return SameAsSystemIo("a cancelled token", () => spindle(c.Spindle.ReadWrite, 0, cancelled), () => system(c.System.ReadWrite, 0, cancelled));
    }

    private static IEnumerable<BadInputCase> EngineCases(BadInputContext c, bool writes,
        Action<SafeFileHandle, long, IoEngine, CancellationToken> spindle, Action<SafeFileHandle, long, CancellationToken> system)
    {
        foreach (IoEngine engine in Enum.GetValues<IoEngine>())
        {
            foreach (BadInputCase @case in AsyncCases(c, writes, (h, o, t) => spindle(h, o, engine, t), system))
            {
                yield return @case with { Input = $"{@case.Input} on {engine}" };
            }
        }
        yield return Throws<ArgumentOutOfRangeException>("engine -1", () => spindle(c.Spindle.ReadWrite, 0, (IoEngine)(-1), default));
        yield return Throws<ArgumentOutOfRangeException>("engine 99", () => spindle(c.Spindle.ReadWrite, 0, (IoEngine)99, default));
    }

    private static Memory<byte>[] ReadBuffers() => [new byte[3], new byte[7]];

    private static ReadOnlyMemory<byte>[] WriteBuffers() => [new byte[3], new byte[7]];

    private static void Wait<T>(ValueTask<T> pending) => pending.AsTask().GetAwaiter().GetResult();

    private static void Wait(ValueTask pending) => pending.AsTask().GetAwaiter().GetResult();
}
