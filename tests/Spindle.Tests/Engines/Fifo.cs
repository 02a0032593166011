using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;

namespace Spindle.Tests.Engines;

/// <summary>A named pipe with a reading and a writing handle (the reader is opened read-write so that neither open blocks).</summary>
internal sealed partial class Fifo : IDisposable
{
    [LibraryImport("libc", EntryPoint = "mkfifo", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static partial int MkFifo(string path, int mode);

    public Fifo(string path)
    {
        if (MkFifo(path, 0x180) != 0)
        {
            throw new IOException($"mkfifo failed: errno {Marshal.GetLastPInvokeError()}");
        }
        Reader = File.OpenHandle(path, FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite);
        Writer = File.OpenHandle(path, FileMode.Open, FileAccess.Write, FileShare.ReadWrite);
    }

    public SafeFileHandle Reader { get; }

    public SafeFileHandle Writer { get; }

    public void Dispose()
    {
        Reader.Dispose();
        Writer.Dispose();
    }
}
