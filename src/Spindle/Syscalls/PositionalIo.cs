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
/// Callers have validated the arguments; each system call holds its own reference on the handle (the imports take
/// the <see cref="SafeFileHandle"/>), and the test seam (<see cref="SyscallSeam"/>) is read once per call.
/// </summary>
internal static unsafe class PositionalIo
{
    internal static int Read(SafeFileHandle handle, Span<byte> buffer, long offset, string? path)
    {
        fixed (byte* pointer = &MemoryMarshal.GetReference(buffer))
        {
            while (true)
            {
                nint result = SyscallSeam.Faults is { } faults ? SyscallSeam.Read(faults, handle, pointer, (nuint)buffer.Length, offset)
                    : offset >= 0 ? Libc.PRead(handle, pointer, (nuint)buffer.Length, offset)
                    : Libc.Read(handle, pointer, (nuint)buffer.Length);
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

    internal static void Write(SafeFileHandle handle, ReadOnlySpan<byte> buffer, long offset, string? path)
    {
        fixed (byte* start = &MemoryMarshal.GetReference(buffer))
        {
            byte* pointer = start;
            nuint remaining = (nuint)buffer.Length;
            while (remaining > 0)
            {
                nint result = SyscallSeam.Faults is { } faults ? SyscallSeam.Write(faults, handle, pointer, remaining, offset)
                    : offset >= 0 ? Libc.PWrite(handle, pointer, remaining, offset)
                    : Libc.Write(handle, pointer, remaining);
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

    internal static long ReadScatter(SafeFileHandle handle, IReadOnlyList<Memory<byte>> buffers, long offset, string? path)
    {
        // Like System.IO, one preadv over at most IOV_MAX buffers: a scatter read may return fewer bytes
        // than requested, and reading on would make results differ.
        var call = new VectorCall(handle, offset, path, write: false);
        return PinnedIovecs.Call(new ScatterBuffers(buffers), Math.Min(buffers.Count, LinuxConstants.IOV_MAX), ref call);
    }

    /// <summary>Writes every buffer in order; returns the number of bytes written (all of them).</summary>
    internal static long WriteGather(SafeFileHandle handle, IReadOnlyList<ReadOnlyMemory<byte>> buffers, long offset, string? path)
    {
        var call = new VectorCall(handle, offset, path, write: true);
        return PinnedIovecs.Call(new GatherBuffers(buffers), buffers.Count, ref call);
    }

    // The system call a pinned list of buffers is for: one preadv, or pwritev until every byte is written (then the total).
    private readonly struct VectorCall(SafeFileHandle handle, long offset, string? path, bool write) : IIovecCall
    {
        public long Run(IoVector* vectors, int count)
        {
            if (!write)
            {
                return ReadVectors(handle, vectors, count, offset, path);
            }
            long total = PinnedIovecs.TotalOf(vectors, count);
            WriteVectors(handle, vectors, count, offset, path);
            return total;
        }
    }

    /// <summary>
    /// One <c>preadv</c> (or <c>readv</c>) over at most IOV_MAX buffers, even for an empty list, so that
    /// errors such as a handle without read access surface as they do in System.IO.
    /// </summary>
    internal static long ReadVectors(SafeFileHandle handle, IoVector* vectors, int count, long offset, string? path)
    {
        count = Math.Min(count, LinuxConstants.IOV_MAX);
        while (true)
        {
            nint result = SyscallSeam.Faults is { } faults ? SyscallSeam.Vector(faults, handle, vectors, count, offset, write: false)
                : offset >= 0 ? Libc.PReadV(handle, vectors, count, offset) : Libc.ReadV(handle, vectors, count);
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
    internal static void WriteVectors(SafeFileHandle handle, IoVector* vectors, int count, long offset, string? path)
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
            nint result = SyscallSeam.Faults is { } faults ? SyscallSeam.Vector(faults, handle, vectors, chunk, offset, write: true)
                : offset >= 0 ? Libc.PWriteV(handle, vectors, chunk, offset) : Libc.WriteV(handle, vectors, chunk);
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
}
