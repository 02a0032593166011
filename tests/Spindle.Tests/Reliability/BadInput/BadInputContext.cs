using Microsoft.Win32.SafeHandles;
using Spindle.Interop;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Reliability.BadInput;

/// <summary>
/// The files and handles the bad inputs are tried on: the same content in a file for Spindle and one for
/// System.IO, each with read-only, write-only, read-write, closed and invalid handles, plus a socket
/// (a handle without positions).
/// </summary>
public sealed unsafe class BadInputContext : IDisposable
{
    public static readonly byte[] Content = ReliabilityKit.Pattern(10_000, 42);

    private readonly TempDirectory _dir = new();
    private readonly List<IDisposable> _owned = [];

    public BadInputContext()
    {
        SpindlePath = _dir.File("spindle");
        SystemPath = _dir.File("system");
        File.WriteAllBytes(SpindlePath, Content);
        File.WriteAllBytes(SystemPath, Content);
        Directory.CreateDirectory(DirectoryPath);

        Spindle = new Handles(this, SpindlePath, (path, access) => SpindleFile.OpenHandle(path, FileMode.Open, access, FileShare.ReadWrite));
        System = new Handles(this, SystemPath, (path, access) => File.OpenHandle(path, FileMode.Open, access, FileShare.ReadWrite));

        Direct = Own(SpindleFile.OpenHandle(SpindlePath, new SpindleFileOptions { Mode = FileMode.Open, Access = FileAccess.ReadWrite, Share = FileShare.ReadWrite, DirectIO = true }));
        Aligned = Own(AlignedMemoryPool.Shared.Rent(8192));

        int* pair = stackalloc int[2];
        Assert.Equal(0, TestLibc.SocketPair(1 /* AF_UNIX */, 1 /* SOCK_STREAM */ | 0x80000 /* SOCK_CLOEXEC */, 0, pair));
        Socket = Own(new SafeFileHandle(pair[0], ownsHandle: true));
        Own(new SafeFileHandle(pair[1], ownsHandle: true));
    }

    public string SpindlePath { get; }

    public string SystemPath { get; }

    public string DirectoryPath => _dir.File("directory");

    public string Missing => _dir.File("missing");

    public Handles Spindle { get; }

    public Handles System { get; }

    /// <summary>An O_DIRECT read-write handle on Spindle's file.</summary>
    public SafeFileHandle Direct { get; }

    /// <summary>An 8 KiB buffer aligned for direct I/O (slice it to misalign it).</summary>
    public System.Buffers.IMemoryOwner<byte> Aligned { get; }

    /// <summary>Opens a stream on Spindle's file (or System.IO's), shared so that the context's handles do not conflict.</summary>
    public Stream OpenStream(bool spindle, FileAccess access, int bufferSize = 4096) => spindle
        ? new SpindleFileStream(SpindlePath, FileMode.Open, access, FileShare.ReadWrite, bufferSize)
        : new FileStream(SystemPath, FileMode.Open, access, FileShare.ReadWrite, bufferSize);

    /// <summary>One end of a socket pair: a handle that cannot seek.</summary>
    public SafeFileHandle Socket { get; }

    /// <summary>A handle whose descriptor is -1.</summary>
    public SafeFileHandle Invalid { get; } = new(-1, ownsHandle: false);

    /// <summary>Fails when either file's bytes changed.</summary>
    public void AssertUnchanged(string input)
    {
        Assert.True(Content.AsSpan().SequenceEqual(File.ReadAllBytes(SpindlePath)), $"'{input}' changed the file Spindle worked on");
        Assert.True(Content.AsSpan().SequenceEqual(File.ReadAllBytes(SystemPath)), $"'{input}' changed the file System.IO worked on");
    }

    private T Own<T>(T item) where T : IDisposable
    {
        _owned.Add(item);
        return item;
    }

    public void Dispose()
    {
        foreach (IDisposable item in _owned)
        {
            item.Dispose();
        }
        _dir.Dispose();
    }

    /// <summary>The handles of one side.</summary>
    public sealed class Handles
    {
        internal Handles(BadInputContext owner, string path, Func<string, FileAccess, SafeFileHandle> open)
        {
            ReadOnly = owner.Own(open(path, FileAccess.Read));
            WriteOnly = owner.Own(open(path, FileAccess.Write));
            ReadWrite = owner.Own(open(path, FileAccess.ReadWrite));
            Closed = open(path, FileAccess.ReadWrite);
            Closed.Dispose();
        }

        public SafeFileHandle ReadOnly { get; }

        public SafeFileHandle WriteOnly { get; }

        public SafeFileHandle ReadWrite { get; }

        public SafeFileHandle Closed { get; }
    }
}
