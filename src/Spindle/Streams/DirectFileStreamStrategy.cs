using System.Buffers;
using Microsoft.Win32.SafeHandles;
using Spindle.Engines;
using Spindle.Engines.FastPath;
using Spindle.Interop;
using Spindle.Syscalls;

namespace Spindle.Streams;

/// <summary>
/// The buffering layer of a stream over an O_DIRECT handle, in place of the ordinary one: the user may
/// read and write any sizes at any positions, while the kernel only ever sees whole aligned blocks
/// from an aligned buffer. The buffer is a window of the file at an aligned offset; a write into it
/// first reads the blocks it changes (read-modify-write), a flush writes the changed blocks in one
/// <c>pwrite</c>, and a flush that had to pad the file's last block puts the length back with <c>ftruncate</c>.
/// The kernel reads into and writes from the window itself, so the base's rules matter most here: the window is
/// given back only once no operation uses it. A write at an aligned position from an aligned buffer at least as
/// large as the window skips it (after a flush) and goes to the kernel in one call, as FileStream bypasses its
/// buffer for large requests.
/// </summary>
internal sealed class DirectFileStreamStrategy : StackedFileStreamStrategy
{
    internal const int MinimumWindow = 64 << 10;

    /// <summary>
    /// The largest window: the window is allocated when the stream opens (System.IO allocates its buffer on
    /// first use), so a huge buffer size must not fail after the file was opened (and perhaps truncated),
    /// and beyond a few MiB per <c>pwrite</c> a bigger window gains nothing on a device.
    /// </summary>
    internal const int MaximumWindow = AlignedMemoryPool.LargestPooled;

    private readonly SafeFileHandle _handle;       // the O_DIRECT descriptor
    private readonly DirectIOAlignment _alignment; // what the file requires
    private readonly int _blockAlignment;          // where a flush may start in the window: both offset- and address-aligned
    private readonly FileIoEngine _engine;         // runs the asynchronous block reads and writes
    private readonly AlignedMemoryPool? _ownPool;  // a pool for memory alignment above the shared pool's, else null
    private IMemoryOwner<byte>? _owner;            // the window's memory; null once disposed
    private readonly int _capacity;                // window size: a multiple of the offset alignment
    private long _windowStart = -1;                // file offset of the window's first byte (aligned), -1 for none
    private int _windowFill;                       // bytes at the window's start that hold file content; the rest is zeros
    private int _dirtyStart;                       // changed bytes not yet written are [_dirtyStart, _dirtyEnd)
    private int _dirtyEnd;
    private SafeFileHandle? _readHandle;           // for a write-only stream: a read-only direct descriptor of the same file
    private HandleFacts? _readFacts;               // _readHandle's facts, learned when it is opened
    private readonly bool _unbuffered;             // the caller asked for no buffer (0 or 1), which System.IO shows in a few exceptions

    internal DirectFileStreamStrategy(OSFileStreamStrategy os, SafeFileHandle handle, DirectIOAlignment alignment, int bufferSize)
        : base(os)
    {
        _handle = handle;
        _alignment = alignment;
        _engine = EngineSelector.Get(os.Engine);
        _unbuffered = bufferSize <= 1;
        int memoryAlignment = Math.Max(alignment.MemoryAlignment, alignment.OffsetAlignment);
        _blockAlignment = memoryAlignment;
        AlignedMemoryPool pool = memoryAlignment <= AlignedMemoryPool.Shared.Alignment
            ? AlignedMemoryPool.Shared
            : _ownPool = new AlignedMemoryPool(memoryAlignment);
        _owner = pool.Rent(WindowSize(bufferSize, alignment));
        _capacity = (int)alignment.AlignDown(_owner.Memory.Length);
    }

    /// <summary>
    /// The window for a requested buffer size: any size (0, 1, 1000, 100000, int.MaxValue) becomes a multiple of
    /// the file's offset alignment, so that every transfer the window makes is whole blocks.
    /// </summary>
    internal static int WindowSize(int bufferSize, DirectIOAlignment alignment)
    {
        // Every transfer goes to the device (no page cache behind it), so a small window would make each
        // 4 KiB a device round trip: at least MinimumWindow, whatever buffer size (even 0) was asked for.
        long wanted = Math.Clamp((long)bufferSize, MinimumWindow, MaximumWindow);
        return (int)alignment.AlignUp(Math.Max(wanted, alignment.OffsetAlignment));
    }

    /// <summary>The file's length, including written data still in the window.</summary>
    public override long Length => Math.Max(_os.Length, IsDirty ? _windowStart + _dirtyEnd : 0);

    public override long Position
    {
        get => _os.Position;
        set => _os.Position = value;
    }

    private bool IsDirty => _dirtyEnd > _dirtyStart;

    private Memory<byte> Window => (_owner ?? throw new ObjectDisposedException(null, "Cannot access a closed file.")).Memory[.._capacity];

    public override long Seek(long offset, SeekOrigin origin)
    {
        long target = origin switch
        {
            SeekOrigin.Begin => offset,
            SeekOrigin.End => Length + offset,
            _ => Position + offset,
        };
        // The layer below applies System.IO's rules (negative positions, the start of an append).
        return _os.Seek(target, SeekOrigin.Begin);
    }

    public override void SetLength(long value)
    {
        Turns.Wait();
        try
        {
            EnsureNotClosed();
            FlushWindow();
            _os.SetLength(value);
            _windowStart = -1; // the window may describe bytes that are gone
        }
        finally
        {
            EndTurn();
        }
    }

    // The kernel reads into and writes from the window: a Dispose on another thread waits for a synchronous call too.
    private protected override bool SyncCallsTakeTurns => true;

    private protected override void FlushBuffers() => FlushWindow();

    private protected override ValueTask FlushBuffersAsync(CancellationToken cancellationToken) => FlushWindowAsync(cancellationToken);

    // ---- Synchronous ----

    public override int ReadByte()
    {
        byte value = 0;
        return Read(new Span<byte>(ref value)) != 0 ? value : -1;
    }

    public override int Read(Span<byte> destination)
    {
        EnsureReadable();
        Turns.Wait();
        try
        {
            EnsureNotClosed(); // disposed while this call waited for its turn
            return ReadInTurn(destination);
        }
        finally
        {
            EndTurn();
        }
    }

    private int ReadInTurn(Span<byte> destination)
    {
        long position = Position;
        int total = 0;
        while (destination.Length > 0)
        {
            if (!Covers(position))
            {
                FlushWindow();
                Load(_alignment.AlignDown(position), skipRead: false);
            }
            int copied = CopyOut(position, destination);
            if (copied == 0)
            {
                break; // end of file
            }
            position += copied;
            total += copied;
            destination = destination[copied..];
            if (_windowFill < _capacity && position >= _windowStart + _windowFill)
            {
                break; // the window holds the end of the file
            }
        }
        Position = position;
        return total;
    }

    public override void Write(ReadOnlySpan<byte> source)
    {
        EnsureWritable();
        Turns.Wait();
        try
        {
            EnsureNotClosed(); // disposed while this call waited for its turn
            WriteInTurn(source);
        }
        finally
        {
            EndTurn();
        }
    }

    private unsafe void WriteInTurn(ReadOnlySpan<byte> source)
    {
        long position = Position;
        if (source.Length >= _capacity && _alignment.IsAligned(position))
        {
            // Pinned for the check and the write, so the address cannot move between them.
            fixed (byte* address = source)
            {
                if (_alignment.IsAligned((nuint)address))
                {
                    int direct = (int)_alignment.AlignDown(source.Length);
                    FlushWindow();
                    HandleIo.Write(_handle, source[..direct], position);
                    Bypassed(position, direct);
                    position += direct;
                    source = source[direct..];
                }
            }
        }
        while (source.Length > 0)
        {
            if (!Covers(position))
            {
                FlushWindow();
                long start = _alignment.AlignDown(position);
                Load(start, skipRead: position == start && source.Length >= _capacity);
            }
            int copied = CopyIn(position, source);
            position += copied;
            source = source[copied..];
            if (_dirtyEnd == _capacity)
            {
                FlushWindow(); // a full window goes out at once: sequential writes stream through
            }
        }
        Position = position;
    }

    private void Load(long start, bool skipRead)
    {
        Span<byte> window = Window.Span;
        int read = skipRead || start >= HandleIo.GetLength(_handle) ? 0 : HandleIo.Read(ReadHandle, window, start);
        window[read..].Clear();
        SetWindow(start, read);
    }

    private void FlushWindow()
    {
        if (!IsDirty)
        {
            return;
        }
        (int from, int to) = DirtyBlocks();
        long lengthBefore = HandleIo.GetLength(_handle);
        HandleIo.Write(_handle, Window.Span[from..to], _windowStart + from);
        FixLength(lengthBefore, to);
    }

    // ---- Asynchronous ----

    public override async ValueTask<int> ReadAsync(Memory<byte> destination, CancellationToken cancellationToken = default)
    {
        EnsureReadable();
        await Turns.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            EnsureNotClosed(); // disposed while this call waited for its turn
            long position = Position;
            int total = 0;
            while (destination.Length > 0)
            {
                if (!Covers(position))
                {
                    await FlushWindowAsync(cancellationToken).ConfigureAwait(false);
                    await LoadAsync(_alignment.AlignDown(position), skipRead: false, cancellationToken).ConfigureAwait(false);
                }
                int copied = CopyOut(position, destination.Span);
                if (copied == 0)
                {
                    break;
                }
                position += copied;
                total += copied;
                destination = destination[copied..];
                if (_windowFill < _capacity && position >= _windowStart + _windowFill)
                {
                    break;
                }
            }
            Position = position;
            return total;
        }
        finally
        {
            EndTurn();
        }
    }

    public override async ValueTask WriteAsync(ReadOnlyMemory<byte> source, CancellationToken cancellationToken = default)
    {
        EnsureWritable();
        await Turns.WaitAsync(cancellationToken).ConfigureAwait(false);
        try
        {
            EnsureNotClosed(); // disposed while this call waited for its turn
            long position = Position;
            if (source.Length >= _capacity && _alignment.IsAligned(position))
            {
                // Pinned for the check and until the kernel is done with it, so the address cannot move between them.
                using MemoryHandle pin = source.Pin();
                if (IsAligned(pin))
                {
                    int direct = (int)_alignment.AlignDown(source.Length);
                    await FlushWindowAsync(cancellationToken).ConfigureAwait(false);
                    await _engine.WriteAsync(_handle, _os.Facts, source[..direct], position, useFastPath: true, cancellationToken).ConfigureAwait(false);
                    Bypassed(position, direct);
                    position += direct;
                    source = source[direct..];
                }
            }
            while (source.Length > 0)
            {
                if (!Covers(position))
                {
                    await FlushWindowAsync(cancellationToken).ConfigureAwait(false);
                    long start = _alignment.AlignDown(position);
                    await LoadAsync(start, skipRead: position == start && source.Length >= _capacity, cancellationToken).ConfigureAwait(false);
                }
                int copied = CopyIn(position, source.Span);
                position += copied;
                source = source[copied..];
                if (_dirtyEnd == _capacity)
                {
                    await FlushWindowAsync(cancellationToken).ConfigureAwait(false);
                }
            }
            Position = position;
        }
        finally
        {
            EndTurn();
        }
    }

    private async ValueTask LoadAsync(long start, bool skipRead, CancellationToken cancellationToken)
    {
        Memory<byte> window = Window;
        int read = skipRead || start >= HandleIo.GetLength(_handle) ? 0 : await ReadBlocksAsync(window, start, cancellationToken).ConfigureAwait(false);
        window.Span[read..].Clear();
        SetWindow(start, read);
    }

    private async ValueTask FlushWindowAsync(CancellationToken cancellationToken)
    {
        if (!IsDirty)
        {
            return;
        }
        (int from, int to) = DirtyBlocks();
        long lengthBefore = HandleIo.GetLength(_handle);
        await _engine.WriteAsync(_handle, _os.Facts, Window[from..to], _windowStart + from, useFastPath: true, cancellationToken).ConfigureAwait(false);
        FixLength(lengthBefore, to);
    }

    private ValueTask<int> ReadBlocksAsync(Memory<byte> window, long start, CancellationToken cancellationToken)
    {
        SafeFileHandle handle = ReadHandle;
        HandleFacts facts = handle == _handle ? _os.Facts : _readFacts ??= HandleFacts.Of(handle);
        return _engine.ReadAsync(handle, facts, window, start, ReadFastPath.Enabled, cancellationToken);
    }

    public override Task CopyToAsync(Stream destination, int bufferSize, CancellationToken cancellationToken)
    {
        // System.IO's unbuffered stream reports a cancelled token from inside the copy (OperationCanceledException).
        return _unbuffered && cancellationToken.IsCancellationRequested
            ? Cancelled(cancellationToken)
            : base.CopyToAsync(destination, bufferSize, cancellationToken);

        static async Task Cancelled(CancellationToken cancellationToken)
        {
            await Task.Yield();
            cancellationToken.ThrowIfCancellationRequested();
        }
    }

    // ---- The window ----

    /// <summary>
    /// The descriptor blocks are read from. Changing part of a block needs the rest of it, so a write-only
    /// stream reopens its file read-only (through <c>/proc/self/fd</c>, which needs read permission on it).
    /// </summary>
    private SafeFileHandle ReadHandle
    {
        get
        {
            if (_os.CanRead)
            {
                return _handle;
            }
            if (_readHandle is null)
            {
                int fd = Libc.Open($"/proc/self/fd/{HandleIo.Fd(_handle)}", OpenFlags.O_RDONLY | OpenFlags.O_DIRECT | OpenFlags.O_CLOEXEC, 0);
                if (fd < 0)
                {
                    int errno = Errno.Last;
                    if (errno is not (Errno.EACCES or Errno.EPERM))
                    {
                        // Out of descriptors (EMFILE) and the like: what System.IO reports for them.
                        throw IoErrors.ForErrno(errno, Name);
                    }
                    throw new UnauthorizedAccessException(
                        $"A write-only unbuffered stream must read the blocks it changes in part, and '{Name}' cannot be opened for reading.",
                        IoErrors.ForErrno(errno, Name));
                }
                _readHandle = new SafeFileHandle(fd, ownsHandle: true);
            }
            return _readHandle;
        }
    }

    private unsafe bool IsAligned(MemoryHandle pin) => _alignment.IsAligned((nuint)pin.Pointer);

    /// <summary>
    /// After a write that went from the caller's buffer straight to the kernel (as FileStream bypasses its buffer
    /// for requests at least as large): a window over any of those bytes now holds stale ones, so it is dropped
    /// (it was flushed first).
    /// </summary>
    private void Bypassed(long position, int count)
    {
        if (_windowStart >= 0 && position < _windowStart + _capacity && position + count > _windowStart)
        {
            _windowStart = -1;
        }
    }

    private bool Covers(long position) => _windowStart >= 0 && position >= _windowStart && position < _windowStart + _capacity;

    private void SetWindow(long start, int fill)
    {
        _windowStart = start;
        _windowFill = fill;
        _dirtyStart = 0;
        _dirtyEnd = 0;
    }

    /// <summary>Copies file bytes at <paramref name="position"/> out of the window; 0 past the end of the file.</summary>
    private int CopyOut(long position, Span<byte> destination)
    {
        int inWindow = (int)(position - _windowStart);
        int available = _windowFill - inWindow;
        if (available <= 0)
        {
            return 0;
        }
        int count = Math.Min(available, destination.Length);
        Window.Span.Slice(inWindow, count).CopyTo(destination);
        return count;
    }

    /// <summary>Copies bytes into the window at <paramref name="position"/> and marks them changed.</summary>
    private int CopyIn(long position, ReadOnlySpan<byte> source)
    {
        int inWindow = (int)(position - _windowStart);
        int count = Math.Min(_capacity - inWindow, source.Length);
        source[..count].CopyTo(Window.Span[inWindow..]);
        if (IsDirty)
        {
            _dirtyStart = Math.Min(_dirtyStart, inWindow);
            _dirtyEnd = Math.Max(_dirtyEnd, inWindow + count);
        }
        else
        {
            _dirtyStart = inWindow;
            _dirtyEnd = inWindow + count;
        }
        // Bytes between the old end of the content and this write are zeros already (see Load).
        _windowFill = Math.Max(_windowFill, inWindow + count);
        return count;
    }

    /// <summary>
    /// The changed bytes widened to whole blocks: what the kernel will accept. The start is also rounded to the
    /// memory alignment (should a file need more of it than of offset alignment), since it is an address in the window.
    /// </summary>
    private (int From, int To) DirtyBlocks() => (_dirtyStart & ~(_blockAlignment - 1), (int)_alignment.AlignUp(_dirtyEnd));

    /// <summary>After a flush: a padded last block made the file too long, so cut it back to its real end.</summary>
    private void FixLength(long lengthBefore, int writtenTo)
    {
        long end = Math.Max(lengthBefore, _windowStart + _dirtyEnd);
        _dirtyStart = 0;
        _dirtyEnd = 0;
        if (_windowStart + writtenTo > end)
        {
            HandleIo.SetLength(_handle, end);
        }
    }

    /// <summary>After the operation whose turn it was has ended (the kernel is done with the window); a second run finds nothing.</summary>
    private protected override void ReleaseMemory()
    {
        _owner?.Dispose();
        _owner = null;
        _readHandle?.Dispose();
        _ownPool?.Dispose();
        _windowStart = -1;
        _dirtyStart = 0;
        _dirtyEnd = 0;
    }
}
