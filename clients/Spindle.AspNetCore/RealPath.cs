using System.Runtime.InteropServices;

namespace Spindle.AspNetCore;

/// <summary><c>realpath(3)</c>: a path with every symbolic link, <c>.</c> and <c>..</c> resolved, as the kernel will open it.</summary>
internal static partial class RealPath
{
    /// <summary>The real path of <paramref name="path"/>, or null when it does not resolve (a missing or dangling name, no permission).</summary>
    public static unsafe string? Of(string path)
    {
        byte* resolved = realpath(path, null);
        if (resolved is null)
        {
            return null;
        }
        try
        {
            return Marshal.PtrToStringUTF8((nint)resolved);
        }
        finally
        {
            NativeMemory.Free(resolved); // realpath allocates with malloc; NativeMemory.Free is free(3) on Linux
        }
    }

    /// <summary>Whether <paramref name="realPath"/> is <paramref name="realRoot"/> or under it; both real paths.</summary>
    public static bool IsUnder(string realPath, string realRoot)
        => realPath.StartsWith(realRoot, StringComparison.Ordinal)
            && (realPath.Length == realRoot.Length || realRoot.EndsWith('/') || realPath[realRoot.Length] == '/');

    [LibraryImport("libc", EntryPoint = "realpath", StringMarshalling = StringMarshalling.Utf8)]
    private static unsafe partial byte* realpath(string path, byte* resolved);
}
