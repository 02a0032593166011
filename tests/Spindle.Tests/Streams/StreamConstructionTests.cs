using Microsoft.Win32.SafeHandles;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Streams;

/// <summary>Constructors, handle hand-over, names, locks, subclassing and finalization, compared with <see cref="FileStream"/>.</summary>
public class StreamConstructionTests
{
    private static void SameOutcome(Func<Stream> system, Func<Stream> spindle, string what)
    {
        StreamOutcome expected = StreamOutcome.Of(() => { using Stream s = system(); return (s.CanRead, s.CanWrite, s.CanSeek, s.Position); });
        StreamOutcome actual = StreamOutcome.Of(() => { using Stream s = spindle(); return (s.CanRead, s.CanWrite, s.CanSeek, s.Position); });
        Assert.True(expected == actual, $"{what}: System.IO {expected}, Spindle {actual}");
    }

    public static TheoryData<FileMode, FileAccess, FileShare, int, FileOptions> PathArguments()
    {
        var data = new TheoryData<FileMode, FileAccess, FileShare, int, FileOptions>();
        FileMode[] modes = [FileMode.CreateNew, FileMode.Create, FileMode.Open, FileMode.OpenOrCreate, FileMode.Truncate, FileMode.Append, (FileMode)0, (FileMode)7];
        FileAccess[] accesses = [FileAccess.Read, FileAccess.Write, FileAccess.ReadWrite, 0, (FileAccess)4];
        foreach (FileMode mode in modes)
        {
            foreach (FileAccess access in accesses)
            {
                data.Add(mode, access, FileShare.Read, 4096, FileOptions.None);
                data.Add(mode, access, FileShare.Read, -1, FileOptions.None);
            }
        }
        data.Add(FileMode.Open, FileAccess.Read, (FileShare)32, 0, FileOptions.None);
        data.Add(FileMode.Open, FileAccess.Read, FileShare.Inheritable | FileShare.ReadWrite, 0, FileOptions.None);
        data.Add(FileMode.Open, FileAccess.Read, FileShare.Read, 0, (FileOptions)1);
        data.Add(FileMode.Open, FileAccess.Read, FileShare.Read, -1, (FileOptions)1);
        data.Add(FileMode.Open, FileAccess.Read, FileShare.Read, 1, FileOptions.Asynchronous | FileOptions.SequentialScan);
        return data;
    }

    [Theory]
    [MemberData(nameof(PathArguments))]
    public void Path_constructor_validates_and_opens_like_FileStream(FileMode mode, FileAccess access, FileShare share, int bufferSize, FileOptions options)
    {
        using var dir = new TempDirectory();
        foreach (bool exists in new[] { false, true })
        {
            string system = dir.File($"system-{exists}");
            string spindle = dir.File($"spindle-{exists}");
            if (exists)
            {
                File.WriteAllBytes(system, new byte[10]);
                File.WriteAllBytes(spindle, new byte[10]);
            }
            SameOutcome(() => new FileStream(system, mode, access, share, bufferSize, options),
                () => new SpindleFileStream(spindle, mode, access, share, bufferSize, options), $"exists {exists}");
            Assert.Equal(File.Exists(system), File.Exists(spindle));
        }
    }

    [Fact]
    public void Shorter_constructors_have_FileStream_defaults()
    {
        using var dir = new TempDirectory();
        SameOutcome(() => new FileStream(null!, FileMode.Open), () => new SpindleFileStream(null!, FileMode.Open), "null path");
        SameOutcome(() => new FileStream("", FileMode.Open), () => new SpindleFileStream("", FileMode.Open), "empty path");
        SameOutcome(() => new FileStream(dir.Path, FileMode.Open), () => new SpindleFileStream(dir.Path, FileMode.Open), "directory");
        SameOutcome(() => new FileStream(dir.Path, FileMode.Open, FileAccess.Read), () => new SpindleFileStream(dir.Path, FileMode.Open, FileAccess.Read), "directory, read");
        SameOutcome(() => new FileStream(dir.File("none"), FileMode.Open), () => new SpindleFileStream(dir.File("none"), FileMode.Open), "missing");
        SameOutcome(() => new FileStream(dir.File("a/b"), FileMode.Create), () => new SpindleFileStream(dir.File("c/d"), FileMode.Create), "missing directory");
        SameOutcome(() => new FileStream(dir.File("s1"), FileMode.Append), () => new SpindleFileStream(dir.File("p1"), FileMode.Append), "append");
        SameOutcome(() => new FileStream(dir.File("s2"), FileMode.Create, FileAccess.Write), () => new SpindleFileStream(dir.File("p2"), FileMode.Create, FileAccess.Write), "write");
        SameOutcome(() => new FileStream(dir.File("s3"), FileMode.Create, FileAccess.ReadWrite, FileShare.None), () => new SpindleFileStream(dir.File("p3"), FileMode.Create, FileAccess.ReadWrite, FileShare.None), "share none");
        SameOutcome(() => new FileStream(dir.File("s4"), FileMode.Create, FileAccess.ReadWrite, FileShare.None, 1), () => new SpindleFileStream(dir.File("p4"), FileMode.Create, FileAccess.ReadWrite, FileShare.None, 1), "buffer 1");
        SameOutcome(() => new FileStream(dir.File("s5"), FileMode.Create, FileAccess.ReadWrite, FileShare.None, 1, true), () => new SpindleFileStream(dir.File("p5"), FileMode.Create, FileAccess.ReadWrite, FileShare.None, 1, true), "useAsync");

        using var system = new FileStream(dir.File("s6"), FileMode.Create, FileAccess.ReadWrite, FileShare.None, 1, true);
        using var spindle = new SpindleFileStream(dir.File("p6"), FileMode.Create, FileAccess.ReadWrite, FileShare.None, 1, true);
        Assert.Equal(system.IsAsync, spindle.IsAsync);
        Assert.Equal(dir.File("p6"), spindle.Name);
        // The sharing mode is enforced against other opens, by either library.
        Assert.Throws<IOException>(() => new FileStream(dir.File("p6"), FileMode.Open, FileAccess.Read));
        Assert.Throws<IOException>(() => new SpindleFileStream(dir.File("s6"), FileMode.Open, FileAccess.Read));
    }

    public static TheoryData<FileMode, FileAccess, long, bool> OptionsArguments()
    {
        var data = new TheoryData<FileMode, FileAccess, long, bool>();
        foreach (FileMode mode in new[] { FileMode.CreateNew, FileMode.Create, FileMode.Open, FileMode.OpenOrCreate, FileMode.Truncate, FileMode.Append })
        {
            foreach (FileAccess access in new[] { FileAccess.Read, FileAccess.Write, FileAccess.ReadWrite })
            {
                data.Add(mode, access, 0, false);
                data.Add(mode, access, 100, false);
                data.Add(mode, access, 0, true);
            }
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(OptionsArguments))]
    public void Options_constructor_validates_like_FileStream(FileMode mode, FileAccess access, long preallocationSize, bool unixCreateMode)
    {
        using var dir = new TempDirectory();
        var systemOptions = new FileStreamOptions { Mode = mode, Access = access, PreallocationSize = preallocationSize };
        var spindleOptions = new SpindleFileOptions { Mode = mode, Access = access, PreallocationSize = preallocationSize };
        if (unixCreateMode)
        {
            systemOptions.UnixCreateMode = UnixFileMode.UserRead | UnixFileMode.UserWrite;
            spindleOptions.UnixCreateMode = UnixFileMode.UserRead | UnixFileMode.UserWrite;
        }
        File.WriteAllBytes(dir.File("system"), new byte[5]);
        File.WriteAllBytes(dir.File("spindle"), new byte[5]);
        SameOutcome(() => new FileStream(dir.File("system"), systemOptions), () => new SpindleFileStream(dir.File("spindle"), spindleOptions), "options");
        SameOutcome(() => new FileStream(dir.File("system"), systemOptions), () => new SpindleFileStream(dir.File("spindle"), systemOptions), "FileStreamOptions");
        SameOutcome(() => new FileStream("", systemOptions), () => new SpindleFileStream("", systemOptions), "empty path, FileStreamOptions");
        SameOutcome(() => new FileStream(dir.File("x"), (FileStreamOptions)null!), () => new SpindleFileStream(dir.File("y"), (FileStreamOptions)null!), "null FileStreamOptions");
        SameOutcome(() => new FileStream(null!, systemOptions), () => new SpindleFileStream(null!, spindleOptions), "null path");
        SameOutcome(() => new FileStream(dir.File("x"), (FileStreamOptions)null!), () => new SpindleFileStream(dir.File("y"), (SpindleFileOptions)null!), "null options");
        SameOutcome(() => new FileStream(null!, (FileStreamOptions)null!), () => new SpindleFileStream(null!, (FileStreamOptions)null!), "null path and options");
    }

    [Fact]
    public void Handle_constructor_validates_like_FileStream()
    {
        using var dir = new TempDirectory();
        File.WriteAllBytes(dir.File("f"), new byte[100]);
        // The one intended difference: System.IO dereferences a null handle (NullReferenceException).
        Assert.Throws<NullReferenceException>(() => new FileStream(null!, FileAccess.Read));
        Assert.Throws<ArgumentNullException>(() => new SpindleFileStream(null!, FileAccess.Read));
        SameOutcome(() => new FileStream(new SafeFileHandle(-1, true), FileAccess.Read), () => new SpindleFileStream(new SafeFileHandle(-1, true), FileAccess.Read), "invalid handle");
        foreach (FileAccess access in new FileAccess[] { 0, (FileAccess)4, FileAccess.Read, FileAccess.Write, FileAccess.ReadWrite })
        {
            foreach (int bufferSize in new[] { -1, 0, 4096 })
            {
                foreach (bool isAsync in new[] { false, true })
                {
                    foreach (bool openedAsync in new[] { false, true })
                    {
                        FileOptions options = openedAsync ? FileOptions.Asynchronous : FileOptions.None;
                        SameOutcome(() => new FileStream(File.OpenHandle(dir.File("f"), FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite, options), access, bufferSize, isAsync),
                            () => new SpindleFileStream(SpindleFile.OpenHandle(dir.File("f"), FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite, options), access, bufferSize, isAsync),
                            $"{access} {bufferSize} {isAsync} {openedAsync}");
                    }
                }
            }
        }
        SafeFileHandle closed = File.OpenHandle(dir.File("f"));
        closed.Dispose();
        SameOutcome(() => new FileStream(closed, FileAccess.Read), () => new SpindleFileStream(closed, FileAccess.Read), "closed handle");
    }

    [Theory]
    [InlineData(0)]
    [InlineData(4096)]
    public void Handle_constructor_starts_at_the_handles_OS_offset(int bufferSize)
    {
        using var dir = new TempDirectory();
        byte[] content = new byte[1000];
        new Random(1).NextBytes(content);
        File.WriteAllBytes(dir.File("f"), content);
        using var source = new FileStream(dir.File("f"), FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite);
        source.Seek(321, SeekOrigin.Begin);
        SafeFileHandle handle = source.SafeFileHandle; // sets the OS offset to 321

        using var stream = new SpindleFileStream(handle, FileAccess.ReadWrite, bufferSize);
        Assert.Equal(321, stream.Position);
        Assert.Equal(content[321], stream.ReadByte());
        Assert.Equal(dir.File("f"), stream.Name);
        Assert.False(stream.IsAsync);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(4096)]
    public void SafeFileHandle_getter_flushes_and_syncs_the_OS_offset(int bufferSize)
    {
        using var dir = new TempDirectory();
        using var stream = new SpindleFileStream(dir.File("f"), FileMode.Create, FileAccess.ReadWrite, FileShare.Read, bufferSize);
        stream.Write(new byte[] { 1, 2, 3, 4, 5 });
        stream.Position = 2;
        SafeFileHandle handle = stream.SafeFileHandle;
        Assert.Equal(5, System.IO.RandomAccess.GetLength(handle));
        // The descriptor's own offset now matches the stream: a stream over the same handle starts there.
        using var view = new FileStream(new SafeFileHandle(handle.DangerousGetHandle(), ownsHandle: false), FileAccess.Read, 0);
        Assert.Equal(2, view.Position);
        Assert.Equal(3, view.ReadByte());
        Assert.Equal(2, stream.Position);
        Assert.Equal(3, stream.ReadByte());

        // With read-ahead in the buffer, the descriptor is moved back to what the caller has consumed.
        Assert.Equal(4, stream.ReadByte());
        SafeFileHandle again = stream.SafeFileHandle;
        using var view2 = new FileStream(new SafeFileHandle(again.DangerousGetHandle(), ownsHandle: false), FileAccess.Read, 0);
        Assert.Equal(4, view2.Position);
        Assert.Equal(5, stream.ReadByte());
    }

    [Theory]
    [InlineData(0)]
    [InlineData(4096)]
    public void Lock_does_not_conflict_with_other_streams_of_the_process_like_FileStream(int bufferSize)
    {
        using var dir = new TempDirectory();
        File.WriteAllBytes(dir.File("f"), new byte[100]);
        using var spindle = new SpindleFileStream(dir.File("f"), FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite, bufferSize);
        using var system = new FileStream(dir.File("f"), FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite, bufferSize);
        // POSIX record locks belong to the process (System.IO takes them with fcntl(F_SETLK)).
        spindle.Lock(10, 20);
        system.Lock(25, 10);
        spindle.Lock(35, 1);
        spindle.Lock(10, 20); // re-locking a range
        spindle.Unlock(10, 20);
        system.Unlock(30, 10);
        spindle.Lock(0, 0); // to the end of the file
        system.Lock(1_000_000, 1);
        spindle.Dispose();
        system.Lock(0, 0);
        Assert.Throws<ObjectDisposedException>(() => spindle.Unlock(0, 0));
    }

    [Fact]
    public void Finalizer_flushes_buffered_data()
    {
        using var dir = new TempDirectory();
        WriteAndDrop(dir.File("f"));
        GC.Collect();
        GC.WaitForPendingFinalizers();
        GC.Collect();
        Assert.Equal(new byte[] { 1, 2, 3 }, File.ReadAllBytes(dir.File("f")));
    }

    [System.Runtime.CompilerServices.MethodImpl(System.Runtime.CompilerServices.MethodImplOptions.NoInlining)]
    private static void WriteAndDrop(string path)
    {
        var stream = new SpindleFileStream(path, FileMode.Create, FileAccess.Write, FileShare.ReadWrite, 4096);
        stream.Write(new byte[] { 1, 2, 3 });
        Assert.Equal(0, new FileInfo(path).Length); // still buffered
    }

    /// <summary>A subclass that overrides only the array overloads, as old code does.</summary>
    private sealed class CountingStream : SpindleFileStream
    {
        public CountingStream(string path, int bufferSize)
            : base(path, FileMode.Create, FileAccess.ReadWrite, FileShare.Read, bufferSize)
        {
        }

        public int Reads { get; private set; }

        public int Writes { get; private set; }

        public bool Disposed { get; private set; }

        public override int Read(byte[] buffer, int offset, int count)
        {
            Reads++;
            return base.Read(buffer, offset, count);
        }

        public override void Write(byte[] buffer, int offset, int count)
        {
            Writes++;
            base.Write(buffer, offset, count);
        }

        public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
        {
            Reads++;
            return base.ReadAsync(buffer, offset, count, cancellationToken);
        }

        public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
        {
            Writes++;
            return base.WriteAsync(buffer, offset, count, cancellationToken);
        }

        protected override void Dispose(bool disposing)
        {
            Disposed = true;
            base.Dispose(disposing);
        }
    }

    [Theory]
    [InlineData(0)]
    [InlineData(4096)]
    public async Task A_derived_type_sees_every_call_through_its_overrides(int bufferSize)
    {
        using var dir = new TempDirectory();
        var stream = new CountingStream(dir.File("f"), bufferSize);
        stream.Write(new byte[] { 1, 2, 3 }.AsSpan());
        stream.WriteByte(4);
        await stream.WriteAsync(new byte[] { 5, 6 }.AsMemory());
        stream.EndWrite(stream.BeginWrite(new byte[] { 7 }, 0, 1, null, null));
        Assert.Equal(4, stream.Writes);
        Assert.Equal(7, stream.Position);

        stream.Position = 0;
        Span<byte> span = stackalloc byte[2];
        Assert.Equal(2, stream.Read(span));
        Assert.Equal(3, stream.ReadByte());
        byte[] buffer = new byte[2];
        Assert.Equal(2, await stream.ReadAsync(buffer.AsMemory()));
        Assert.Equal(1, stream.EndRead(stream.BeginRead(buffer, 0, 1, null, null)));
        Assert.Equal(6, buffer[0]);
        var copy = new MemoryStream();
        stream.CopyTo(copy);
        Assert.Equal(new byte[] { 7 }, copy.ToArray());
        Assert.True(stream.Reads >= 5);

        await stream.DisposeAsync();
        Assert.True(stream.Disposed);
        Assert.Equal(new byte[] { 1, 2, 3, 4, 5, 6, 7 }, File.ReadAllBytes(dir.File("f")));
    }

    [Fact]
    public void Engine_names_the_resolved_engine()
    {
        using var dir = new TempDirectory();
        foreach (IoEngine engine in Enum.GetValues<IoEngine>())
        {
            foreach (bool useAsync in new[] { false, true })
            {
                using var stream = new SpindleFileStream(dir.File("f"), new SpindleFileOptions
                {
                    Mode = FileMode.Create,
                    Access = FileAccess.ReadWrite,
                    Options = useAsync ? FileOptions.Asynchronous : FileOptions.None,
                    Engine = engine,
                });
                Assert.NotEqual(IoEngine.Auto, stream.Engine);
                Assert.Equal(useAsync, stream.IsAsync);
                if (engine == IoEngine.Sync)
                {
                    Assert.Equal(IoEngine.Sync, stream.Engine);
                }
                if (engine == IoEngine.Auto)
                {
                    // Synchronous streams run *Async on the pool, as System.IO does on Unix; asynchronous ones on the process default.
                    Assert.Equal(useAsync ? Spindle.Engines.EngineSelector.Default.Kind : IoEngine.ThreadPool, stream.Engine);
                }
                if (engine == IoEngine.IoUring)
                {
                    Assert.Equal(Spindle.Engines.EngineSelector.IsIoUringAvailable ? IoEngine.IoUring : IoEngine.ThreadPool, stream.Engine);
                }
            }
        }
    }
}
