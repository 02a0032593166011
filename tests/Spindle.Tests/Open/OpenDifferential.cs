using System.Text;
using Microsoft.Win32.SafeHandles;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Open;

/// <summary>
/// Runs one open on System.IO and on Spindle, each in its own directory prepared the same way, and
/// describes everything observable: the outcome, the descriptor's flags, the handle's state, and the
/// file left on disk (existence, bytes, permission bits).
/// </summary>
internal static class OpenDifferential
{
    internal static readonly byte[] InitialContent = "hello, spindle"u8.ToArray();

    /// <summary>One side of an open: the opener gets the full path.</summary>
    internal delegate SafeFileHandle Opener(string path);

    /// <summary>
    /// Opens <paramref name="name"/> inside fresh copies of a directory with both libraries and returns
    /// the two descriptions (System.IO's, Spindle's).
    /// </summary>
    internal static (string SystemIo, string Spindle) Compare(string name, bool exists, Opener systemIo, Opener spindle,
        Action<SafeFileHandle>? use = null)
    {
        using var directory = new TempDirectory();
        string a = Prepare(directory.File("system"), name, exists);
        string b = Prepare(directory.File("spindle"), name, exists);
        return (Describe(a, systemIo, use), Describe(b, spindle, use));
    }

    private static string Prepare(string directory, string name, bool exists)
    {
        Directory.CreateDirectory(directory);
        string path = Path.Combine(directory, name);
        if (exists)
        {
            File.WriteAllBytes(path, InitialContent);
            File.SetUnixFileMode(path, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.GroupRead);
        }
        return path;
    }

    internal static string Describe(string path, Opener open, Action<SafeFileHandle>? use = null)
    {
        var text = new StringBuilder();
        SafeFileHandle? handle = null;
        Outcome outcome = Outcome.Of(() => handle = open(path));
        text.Append("open ").Append(outcome);
        if (handle is not null)
        {
            using (handle)
            {
                text.Append(Handle(handle));
                if (use is not null)
                {
                    text.Append(" use ").Append(Outcome.Of(() => use(handle)));
                }
            }
        }
        text.Append(OnDisk(path));
        return text.ToString();
    }

    internal static string Handle(SafeFileHandle handle)
    {
        int flags = TestLibc.StatusFlags(handle) & (TestLibc.O_ACCMODE | TestLibc.O_SYNC | TestLibc.O_APPEND | TestLibc.O_NONBLOCK);
        return $" flags=0x{flags:x} cloexec={TestLibc.IsCloseOnExec(handle)} async={handle.IsAsync}" +
            $" length={Outcome.Of(() => System.IO.RandomAccess.GetLength(handle))}";
    }

    internal static string OnDisk(string path)
    {
        int type = TestLibc.FileType(path);
        if (type < 0)
        {
            // Missing, or a dangling symbolic link.
            return " file=absent";
        }
        if (type != TestLibc.S_IFREG)
        {
            // Devices and FIFOs: reading them would block or never end.
            return $" file=special mode={File.GetUnixFileMode(path)}";
        }
        byte[] bytes = File.ReadAllBytes(path);
        return $" file={Convert.ToHexString(bytes)} mode={File.GetUnixFileMode(path)}";
    }
}
