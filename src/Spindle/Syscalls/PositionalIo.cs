using System.Buffers;
using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;
using Spindle.Diagnostics;
using Spindle.Interop;

namespace Spindle.Syscalls;

/// <summary>
/// The blocking system calls behind every engine: one <c>pread</c>/<c>preadv</c> per read, <c>pwrite</c>/
/// <c>pwritev</c> repeated until everything is written, EINTR retried, and <c>read</c>/<c>write</c> for
/// handles without positions. An offset below zero means "no position" (a pipe, a socket, a
/// character device); ESPIPE or ENXIO from a positional call switches to that mode too.
/// Callers have validated the arguments and hold a reference on the handle.
/// </summary>
internal static unsafe class PositionalIo
{
    // Scatter/gather lists up to this many buffers keep their iovecs on the stack.
    private const int StackIoVectors = 32;
    // Scatter/gather lists up to this many buffers are pinned with `fixed`, one stack frame per buffer.
    private const int FixedPinLimit = 8;

    internal static int Read(int fd, Span<byte> buffer, long offset, string? path)
    {
        fixed (byte* pointer = &MemoryMarshal.GetReference(buffer))
        {
            while (true)
            {
                nint result = SyscallFaults.Enabled ? SyscallFaults.Read(fd, pointer, (nuint)buffer.Length, offset) : offset >= 0
                    ? Libc.PRead(fd, pointer, (nuint)buffer.Length, offset)
                    : Libc.Read(fd, pointer, (nuint)buffer.Length);
                if (result >= 0)
                {
                    return (int)result;
                }
                int errno = Errno.Last;
                if (errno == Errno.EINTR)
                {
                    continue;
                }
                if (offset >= 0 && errno is Errno.ESPIPE or Errno.ENXIO)
                {
                    offset = -1;
                    continue;
                }
                throw IoErrors.ForErrno(errno, path);
            }
        }
    }

    internal static void Write(int fd, ReadOnlySpan<byte> buffer, long offset, string? path)
    {
        fixed (byte* start = &MemoryMarshal.GetReference(buffer))
        {
            byte* pointer = start;
            nuint remaining = (nuint)buffer.Length;
            while (remaining > 0)
            {
                nint result = SyscallFaults.Enabled ? SyscallFaults.Write(fd, pointer, remaining, offset) : offset >= 0
                    ? Libc.PWrite(fd, pointer, remaining, offset)
                    : Libc.Write(fd, pointer, remaining);
                if (result < 0)
                {
                    int errno = Errno.Last;
                    if (errno == Errno.EINTR)
                    {
                        continue;
                    }
                    if (offset >= 0 && errno is Errno.ESPIPE or Errno.ENXIO)
                    {
                        offset = -1;
                        continue;
                    }
                    throw IoErrors.ForErrno(errno, path);
                }
                // A short write is not an error: continue from where the kernel stopped.
                pointer += result;
                remaining -= (nuint)result;
                if (offset >= 0)
                {
                    offset += result;
                }
            }
        }
    }

    internal static long ReadScatter(int fd, IReadOnlyList<Memory<byte>> buffers, long offset, string? path)
    {
        // Like System.IO, one preadv over at most IOV_MAX buffers: a scatter read may return fewer bytes
        // than requested, and reading on would make results differ.
        int count = Math.Min(buffers.Count, LinuxConstants.IOV_MAX);
        if (count <= FixedPinLimit)
        {
            IoVector* fixedVectors = stackalloc IoVector[FixedPinLimit];
            return ReadScatterPinned(fd, buffers, 0, count, fixedVectors, offset, path);
        }
        MemoryHandle[] pins = ArrayPool<MemoryHandle>.Shared.Rent(count);
        IoVector* heapVectors = null;
        try
        {
            IoVector* stackVectors = stackalloc IoVector[StackIoVectors];
            IoVector* vectors = count <= StackIoVectors ? stackVectors : heapVectors = (IoVector*)NativeMemory.Alloc((nuint)count, (nuint)sizeof(IoVector));
            for (int i = 0; i < count; i++)
            {
                Memory<byte> buffer = buffers[i];
                pins[i] = buffer.Pin();
                vectors[i] = new IoVector { Base = (byte*)pins[i].Pointer, Count = (nuint)buffer.Length };
            }
            return ReadVectors(fd, vectors, count, offset, path);
        }
        finally
        {
            Unpin(pins, count);
            NativeMemory.Free(heapVectors);
        }
    }

    /// <summary>Writes every buffer in order; returns the number of bytes written (all of them).</summary>
    internal static long WriteGather(int fd, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long offset, string? path)
    {
        long total = 0;
        int count = buffers.Count;
        if (count <= FixedPinLimit)
        {
            IoVector* fixedVectors = stackalloc IoVector[FixedPinLimit];
            return WriteGatherPinned(fd, buffers, 0, count, fixedVectors, offset, path);
        }
        MemoryHandle[] pins = ArrayPool<MemoryHandle>.Shared.Rent(count);
        IoVector* heapVectors = null;
        try
        {
            IoVector* stackVectors = stackalloc IoVector[StackIoVectors];
            IoVector* vectors = count <= StackIoVectors ? stackVectors : heapVectors = (IoVector*)NativeMemory.Alloc((nuint)count, (nuint)sizeof(IoVector));
            for (int i = 0; i < count; i++)
            {
                ReadOnlyMemory<byte> buffer = buffers[i];
                pins[i] = buffer.Pin();
                vectors[i] = new IoVector { Base = (byte*)pins[i].Pointer, Count = (nuint)buffer.Length };
                total += buffer.Length;
            }
            WriteVectors(fd, vectors, count, offset, path);
            return total;
        }
        finally
        {
            Unpin(pins, count);
            NativeMemory.Free(heapVectors);
        }
    }

    // Pins buffers[index..count] one per stack frame, with `fixed` for array-backed memory (no GC handle,
    // no pooled array), with MemoryManager.Pin otherwise, as Memory.Pin would; then one preadv.
    private static long ReadScatterPinned(int fd, IReadOnlyList<Memory<byte>> buffers, int index, int count, IoVector* vectors,
        long offset, string? path)
    {
        if (index == count)
        {
            return ReadVectors(fd, vectors, count, offset, path);
        }
        Memory<byte> buffer = buffers[index];
        if (MemoryMarshal.TryGetMemoryManager<byte, MemoryManager<byte>>(buffer, out _))
        {
            using MemoryHandle pin = buffer.Pin();
            vectors[index] = new IoVector { Base = (byte*)pin.Pointer, Count = (nuint)buffer.Length };
            return ReadScatterPinned(fd, buffers, index + 1, count, vectors, offset, path);
        }
        fixed (byte* pointer = &MemoryMarshal.GetReference(buffer.Span))
        {
            vectors[index] = new IoVector { Base = pointer, Count = (nuint)buffer.Length };
            return ReadScatterPinned(fd, buffers, index + 1, count, vectors, offset, path);
        }
    }

    // As ReadScatterPinned, for a gather write; returns the total length (all of it is written).
    private static long WriteGatherPinned(int fd, IReadOnlyList<ReadOnlyMemory<byte>> buffers, int index, int count, IoVector* vectors,
        long offset, string? path)
    {
        if (index == count)
        {
            long total = 0;
            for (int i = 0; i < count; i++)
            {
                total += (long)vectors[i].Count;
            }
            WriteVectors(fd, vectors, count, offset, path);
            return total;
        }
        ReadOnlyMemory<byte> buffer = buffers[index];
        if (MemoryMarshal.TryGetMemoryManager<byte, MemoryManager<byte>>(buffer, out _))
        {
            using MemoryHandle pin = buffer.Pin();
            vectors[index] = new IoVector { Base = (byte*)pin.Pointer, Count = (nuint)buffer.Length };
            return WriteGatherPinned(fd, buffers, index + 1, count, vectors, offset, path);
        }
        fixed (byte* pointer = &MemoryMarshal.GetReference(buffer.Span))
        {
            vectors[index] = new IoVector { Base = pointer, Count = (nuint)buffer.Length };
            return WriteGatherPinned(fd, buffers, index + 1, count, vectors, offset, path);
        }
    }

    /// <summary>
    /// One <c>preadv</c> (or <c>readv</c>) over at most IOV_MAX buffers, even for an empty list, so that
    /// errors such as a handle without read access surface as they do in System.IO.
    /// </summary>
    internal static long ReadVectors(int fd, IoVector* vectors, int count, long offset, string? path)
    {
        count = Math.Min(count, LinuxConstants.IOV_MAX);
        while (true)
        {
            nint result = SyscallFaults.Enabled ? SyscallFaults.Vector(fd, vectors, count, offset, write: false)
                : offset >= 0 ? Libc.PReadV(fd, vectors, count, offset) : Libc.ReadV(fd, vectors, count);
            if (result >= 0)
            {
                return result;
            }
            int errno = Errno.Last;
            if (errno == Errno.EINTR)
            {
                continue;
            }
            if (offset >= 0 && errno is Errno.ESPIPE or Errno.ENXIO)
            {
                offset = -1;
                continue;
            }
            throw IoErrors.ForErrno(errno, path);
        }
    }

    /// <summary>
    /// <c>pwritev</c> until every byte is written; a partial result resumes inside the iovec where the
    /// kernel stopped. The caller's iovecs are modified.
    /// </summary>
    internal static void WriteVectors(int fd, IoVector* vectors, int count, long offset, string? path)
    {
        while (true)
        {
            // Skip empty (or fully written) iovecs so that a finished list ends the loop.
            while (count > 0 && vectors->Count == 0)
            {
                vectors++;
                count--;
            }
            if (count == 0)
            {
                return;
            }

            int chunk = Math.Min(count, LinuxConstants.IOV_MAX);
            nint result = SyscallFaults.Enabled ? SyscallFaults.Vector(fd, vectors, chunk, offset, write: true)
                : offset >= 0 ? Libc.PWriteV(fd, vectors, chunk, offset) : Libc.WriteV(fd, vectors, chunk);
            if (result < 0)
            {
                int errno = Errno.Last;
                if (errno == Errno.EINTR)
                {
                    continue;
                }
                if (offset >= 0 && errno is Errno.ESPIPE or Errno.ENXIO)
                {
                    offset = -1;
                    continue;
                }
                throw IoErrors.ForErrno(errno, path);
            }
            if (offset >= 0)
            {
                offset += result;
            }
            Advance(ref vectors, ref count, (nuint)result);
        }
    }

    /// <summary>Moves past <paramref name="written"/> bytes of an iovec list.</summary>
    internal static void Advance(ref IoVector* vectors, ref int count, nuint written)
    {
        while (written > 0 && count > 0)
        {
            if (written >= vectors->Count)
            {
                written -= vectors->Count;
                vectors++;
                count--;
            }
            else
            {
                vectors->Base += written;
                vectors->Count -= written;
                written = 0;
            }
        }
    }

    private static void Unpin(MemoryHandle[] pins, int count)
    {
        for (int i = 0; i < count; i++)
        {
            pins[i].Dispose();
        }
        ArrayPool<MemoryHandle>.Shared.Return(pins, clearArray: true);
    }
}
