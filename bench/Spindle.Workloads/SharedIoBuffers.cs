using System.Buffers;
using Microsoft.Win32.SafeHandles;
using Spindle.Interop;
using static Spindle.Interop.IoUringConstants;

namespace Spindle.Workloads;

/// <summary>
/// A row's I/O buffers in one file on a memory file system (<c>/dev/shm</c>), mapped shared, so that
/// fio does its I/O from the very same physical pages (<see cref="FioJob.IoMemoryFile"/>).
/// </summary>
/// <remarks>
/// A virtio disk's cost per request grows with the physically contiguous runs in its buffer (one
/// descriptor each), and a 1 MiB request of more runs than the queue's <c>max_segments</c> is split in
/// two. Where a process's pages land is the allocator's luck: measured on the development VM, the same
/// engine moved 1 MiB O_DIRECT reads 3.4× faster from 1-run buffers than from 176–255-run ones, and
/// fio, which draws fresh pages each run, swung between 0.9 and 5.4 GB/s from run to run. Sharing the
/// pages makes System.IO, Spindle and fio pay the same per request.
/// </remarks>
public sealed unsafe class SharedIoBuffers : IDisposable
{
    private const string MemoryDirectory = "/dev/shm";

    private readonly SafeFileHandle _file;      // keeps the file open while mapped
    private byte* _mapping;                     // null once disposed
    private readonly nuint _mappingLength;
    private readonly MappedBuffer[] _buffers;

    private SharedIoBuffers(string path, SafeFileHandle file, byte* mapping, nuint mappingLength, int count, int size)
    {
        Path = path;
        _file = file;
        _mapping = mapping;
        _mappingLength = mappingLength;
        _buffers = new MappedBuffer[count];
        for (int i = 0; i < count; i++)
        {
            _buffers[i] = new MappedBuffer(mapping + (long)i * size, size);
        }
    }

    /// <summary>The file that holds the buffers, for fio's <c>--iomem=mmapshared:</c>.</summary>
    public string Path { get; }

    /// <summary>Buffer <paramref name="index"/>: bytes [index × size, (index + 1) × size) of the file, as fio lays out its buffers.</summary>
    public Memory<byte> this[int index] => _buffers[index].Memory;

    /// <summary>
    /// Maps <paramref name="count"/> page-aligned buffers of <paramref name="size"/> bytes filled with
    /// 0x5A, or returns null when there is no memory file system (then each side uses its own memory).
    /// The file is registered with <paramref name="files"/> for deletion.
    /// </summary>
    public static SharedIoBuffers? TryCreate(BenchFiles files, int count, int size)
    {
        if (!IsMemoryFileSystem(MemoryDirectory))
        {
            return null;
        }
        string path = System.IO.Path.Combine(MemoryDirectory, $"spindle-bench-{Environment.ProcessId}-{Guid.NewGuid():N}.buffers");
        // One page more than the buffers: fio maps its buffers' length plus a page of alignment slack.
        long length = (long)count * size + Environment.SystemPageSize;
        SafeFileHandle file;
        try
        {
            // Preallocated, so that a full tmpfs refuses here rather than with SIGBUS on first touch.
            file = File.OpenHandle(path, FileMode.CreateNew, FileAccess.ReadWrite, FileShare.ReadWrite, FileOptions.None, length);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return null; // not writable for this user, or full: each side keeps its own memory
        }
        files.Adopt(path);
        System.IO.RandomAccess.SetLength(file, length);
        void* mapping = Libc.MMap(null, (nuint)length, PROT_READ | PROT_WRITE, MAP_SHARED, (int)file.DangerousGetHandle(), 0);
        if (mapping == (void*)-1)
        {
            file.Dispose();
            return null;
        }
        // Touching the pages in order allocates them now, the same for every contender.
        new Span<byte>(mapping, (int)Math.Min(length, int.MaxValue)).Fill(0x5A);
        return new SharedIoBuffers(path, file, (byte*)mapping, (nuint)length, count, size);
    }

    private static bool IsMemoryFileSystem(string directory)
    {
        try
        {
            return Directory.Exists(directory) && new DriveInfo(directory).DriveFormat == "tmpfs";
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or ArgumentException)
        {
            return false;
        }
    }

    /// <summary>Unmaps the buffers and closes the file (the owner of the <see cref="BenchFiles"/> deletes it).</summary>
    public void Dispose()
    {
        if (_mapping != null)
        {
            Libc.MUnmap(_mapping, _mappingLength);
            _mapping = null;
        }
        _file.Dispose();
    }

    // A window of the mapping; the mapping outlives every operation of the row.
    private sealed class MappedBuffer(byte* pointer, int length) : MemoryManager<byte>
    {
        public override Span<byte> GetSpan() => new(pointer, length);

        public override MemoryHandle Pin(int elementIndex = 0) => new(pointer + elementIndex);

        public override void Unpin()
        {
        }

        protected override void Dispose(bool disposing)
        {
        }
    }
}
