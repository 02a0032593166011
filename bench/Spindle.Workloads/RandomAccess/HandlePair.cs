using Microsoft.Win32.SafeHandles;

namespace Spindle.Workloads.RandomAccess;

/// <summary>
/// One handle opened by System.IO and one by Spindle on the same content, so that each side's open
/// path is its own and neither side's file lock blocks the other.
/// </summary>
internal sealed class HandlePair : IDisposable
{
    private HandlePair(SafeFileHandle systemIO, SafeFileHandle spindle)
    {
        SystemIO = systemIO;
        Spindle = spindle;
    }

    /// <summary>The handle from <see cref="File.OpenHandle"/>.</summary>
    public SafeFileHandle SystemIO { get; }

    /// <summary>The handle from <see cref="SpindleFile.OpenHandle(string, SpindleFileOptions)"/>.</summary>
    public SafeFileHandle Spindle { get; }

    /// <summary>The handle of a contender.</summary>
    public SafeFileHandle For(Contender contender) => contender == Contender.SystemIO ? SystemIO : Spindle;

    /// <summary>Opens <paramref name="source"/> for reading on both sides.</summary>
    public static HandlePair ForReading(string source, FileOptions options) => new(
        File.OpenHandle(source, FileMode.Open, FileAccess.Read, FileShare.Read, options),
        SpindleFile.OpenHandle(source, FileMode.Open, FileAccess.Read, FileShare.Read, options));

    /// <summary>Creates two target files of <paramref name="size"/> bytes, one per side, for writing.</summary>
    public static HandlePair ForWriting(BenchFiles files, string name, long size, FileOptions options)
    {
        SafeFileHandle systemIO = File.OpenHandle(files.Target(name + "-systemio"), FileMode.Create, FileAccess.ReadWrite, FileShare.Read, options, size);
        SafeFileHandle spindle = SpindleFile.OpenHandle(files.Target(name + "-spindle"), FileMode.Create, FileAccess.ReadWrite, FileShare.Read, options, size);
        return new HandlePair(systemIO, spindle);
    }

    public void Dispose()
    {
        SystemIO.Dispose();
        Spindle.Dispose();
    }
}
