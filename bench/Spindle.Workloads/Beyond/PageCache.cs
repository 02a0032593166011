using Microsoft.Win32.SafeHandles;

namespace Spindle.Workloads.Beyond;

/// <summary>Brings a file into the page cache so that a row measures cache hits, not the disk.</summary>
internal static class PageCache
{
    public static void Warm(SafeFileHandle handle, long length)
    {
        byte[] chunk = new byte[1 << 20];
        for (long offset = 0; offset < length; offset += chunk.Length)
        {
            if (System.IO.RandomAccess.Read(handle, chunk, offset) == 0)
            {
                break;
            }
        }
    }
}
