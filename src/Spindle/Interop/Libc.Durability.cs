namespace Spindle.Interop;

/// <summary>The durability calls: a write that is durable on its own (<c>pwritev2</c> with <c>RWF_DSYNC</c>).</summary>
internal static unsafe partial class Libc
{
    /// <summary><c>RWF_DSYNC</c> (Linux 4.7): this write alone as if the file were opened with <c>O_DSYNC</c>.</summary>
    internal const int RWF_DSYNC = 0x2;

    [System.Runtime.InteropServices.LibraryImport(Lib, EntryPoint = "pwritev2", SetLastError = true)]
    internal static partial nint PWriteV2(System.Runtime.InteropServices.SafeHandle fd, IoVector* vectors, int count, long offset, int flags);

    /// <summary><c>pwritev2</c> of one buffer.</summary>
    internal static nint PWriteV2(System.Runtime.InteropServices.SafeHandle fd, byte* buffer, nuint count, long offset, int flags)
    {
        IoVector vector = new() { Base = buffer, Count = count };
        return PWriteV2(fd, &vector, 1, offset, flags);
    }
}
