using System.Runtime.CompilerServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Engines;
using Spindle.Engines.FastPath;
using Spindle.Handles;
using Spindle.Interop;
using Spindle.Syscalls;

namespace Spindle.Streams;

/// <summary>
/// The bottom layer of every stream: owns the handle, the access it was opened with and the engine
/// that runs asynchronous operations. Subclasses decide how offsets work: a position kept in memory
/// (<see cref="SeekableFileStreamStrategy"/>) or none at all (<see cref="UnseekableFileStreamStrategy"/>).
/// </summary>
internal abstract class OSFileStreamStrategy : FileStreamStrategy
{
    private const string UnknownName = "[Unknown]";

    // The handle; the stream owns it and disposes it.
    protected readonly SafeFileHandle _fileHandle;
    // What the handle may do: checked here so that errors are NotSupportedException, as in System.IO.
    private readonly FileAccess _access;
    // Runs the *Async operations.
    protected readonly FileIoEngine _engine;
    // Whether the handle was opened for asynchronous I/O (IsAsyncFlag); whether the file has positions (HasPositionsFlag:
    // the seekable subclass; a field, so that CanSeek is a direct call on every read and seek); whether the stream was
    // opened with FileMode.Append (AppendsFlag: the seekable subclass keeps where the file ended). One byte for the
    // three keeps the stream object as small as System.IO's.
    private readonly byte _flags;
    private const byte IsAsyncFlag = 1, HasPositionsFlag = 2, AppendsFlag = 4;
    // What the stream's open learned about the file, from which the first asynchronous operation learns the
    // handle's facts (sparing up to three system calls per stream); unknown for a handle opened elsewhere.
    private readonly OpenedFile _opened;
    // The handle's facts, learned at the first asynchronous operation and passed with every one to the engine,
    // so that no operation looks them up; null until then (a stream used synchronously never needs them).
    private HandleFacts? _facts;

    protected OSFileStreamStrategy(SafeFileHandle handle, FileAccess access, bool isAsync, FileIoEngine engine, in OpenedFile opened, bool hasPositions,
        bool appends = false)
    {
        _flags = (byte)((isAsync ? IsAsyncFlag : 0) | (hasPositions ? HasPositionsFlag : 0) | (appends ? AppendsFlag : 0));
        _fileHandle = handle;
        _access = access;
        _engine = engine;
        _opened = opened;
    }

    public sealed override bool CanRead => !_fileHandle.IsClosed && (_access & FileAccess.Read) != 0;

    public sealed override bool CanWrite => !_fileHandle.IsClosed && (_access & FileAccess.Write) != 0;

    public sealed override bool CanSeek => (_flags & HasPositionsFlag) != 0 && !_fileHandle.IsClosed;

    /// <summary>Whether the stream was opened with FileMode.Append.</summary>
    private protected bool Appends => (_flags & AppendsFlag) != 0;

    internal sealed override bool IsAsync => (_flags & IsAsyncFlag) != 0;

    internal sealed override bool IsClosed => _fileHandle.IsClosed;

    internal sealed override string Name => SafeFileHandleInternals.GetPath(_fileHandle) ?? UnknownName;

    internal sealed override IoEngine Engine => _engine.Kind;

    // Nothing is buffered at this layer.
    public sealed override Task FlushAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    internal sealed override void Flush(bool flushToDisk)
    {
        if (flushToDisk && CanWrite)
        {
            HandleIo.FlushToDisk(_fileHandle);
        }
    }

    public sealed override int Read(byte[] buffer, int offset, int count) => Read(new Span<byte>(buffer, offset, count));

    public sealed override void Write(byte[] buffer, int offset, int count) => Write(new ReadOnlySpan<byte>(buffer, offset, count));

    public sealed override int ReadByte()
    {
        byte value = 0;
        return Read(new Span<byte>(ref value)) != 0 ? value : -1;
    }

    public sealed override void WriteByte(byte value) => Write(new ReadOnlySpan<byte>(in value));

    internal sealed override void Lock(long position, long length)
        => LockRegion(CanWrite ? FileRegionLock.F_WRLCK : FileRegionLock.F_RDLCK, position, length);

    internal sealed override void Unlock(long position, long length)
        => LockRegion(FileRegionLock.F_UNLCK, position, length);

    // POSIX record locks, exactly as System.IO takes them (fcntl F_SETLK): they belong to the process, so
    // two streams of one process never conflict, and closing any descriptor of the file drops them all.
    private unsafe void LockRegion(short type, long position, long length)
    {
        var region = new FileRegionLock { Type = type, Whence = LinuxConstants.SEEK_SET, Start = position, Length = length };
        int result;
        do
        {
            result = Libc.FcntlLock(_fileHandle, FileRegionLock.F_SETLK, &region);
        }
        while (result < 0 && Errno.Last == Errno.EINTR);
        if (result < 0)
        {
            throw IoErrors.ForErrno(Errno.Last, SafeFileHandleInternals.GetPath(_fileHandle));
        }
    }

    /// <summary>What is known about the handle, for the engine: learned once, at the first asynchronous operation.</summary>
    internal HandleFacts Facts
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => _facts ?? LearnFacts();
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private HandleFacts LearnFacts()
    {
        // Kept in the process's table too, so that SpindleRandomAccess on this stream's handle finds the same facts.
        // Two first operations racing both learn; the table keeps one set, which both get.
        HandleFacts facts = _opened.IsKnown ? HandleFacts.Of(_fileHandle, _opened) : HandleFacts.Of(_fileHandle);
        _facts = facts;
        return facts;
    }

    protected void EnsureReadable()
    {
        if (_fileHandle.IsClosed)
        {
            ThrowHelper.ThrowFileClosed();
        }
        if ((_access & FileAccess.Read) == 0)
        {
            StreamThrowHelper.ThrowUnreadable();
        }
    }

    protected void EnsureWritable()
    {
        if (_fileHandle.IsClosed)
        {
            ThrowHelper.ThrowFileClosed();
        }
        if ((_access & FileAccess.Write) == 0)
        {
            StreamThrowHelper.ThrowUnwritable();
        }
    }

    protected override void Dispose(bool disposing)
    {
        // On finalization the handle has its own (critical) finalizer.
        if (disposing && !_fileHandle.IsClosed)
        {
            _fileHandle.Dispose();
        }
    }

    public override ValueTask DisposeAsync()
    {
        if (_fileHandle.IsClosed)
        {
            return default;
        }
        // The engine closes as the handle's Dispose would; io_uring with IORING_OP_CLOSE where the close may wait.
        return _engine.CloseAsync(_fileHandle, CloseMayWait());
    }

    // A close waits for I/O on a file system not known to be local (network and FUSE ones write back or ask their
    // server) and when it deletes the file (the last close frees its blocks); elsewhere close(2) returns at once.
    // What the open or the first asynchronous operation learned is not asked again.
    private bool CloseMayWait()
        => SafeFileHandleInternals.DeletesOnClose(_fileHandle)
            || !(_opened.WritesAreCopies ?? LocalAsLearned() ?? LocalFileSystems.IsLocal(_fileHandle));

    private bool? LocalAsLearned()
        => _facts is { FileSystem: not FileSystemKind.Unknown } facts ? LocalFileSystems.IsLocal(facts.FileSystem) : null;
}
