using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Streams;

/// <summary>
/// <c>Lock</c>/<c>Unlock</c> against <see cref="FileStream"/>'s: POSIX record locks (<c>fcntl(F_SETLK)</c>),
/// which belong to the process, so two streams of one process never conflict, an unlock through one
/// stream releases a range locked through another, and closing any descriptor of the file releases them
/// all. Other processes see the conflicts; a child process probes them.
/// </summary>
public class StreamLockTests
{
    private delegate Stream Open(string path);

    private static readonly Open OpenSystem = path => new FileStream(path, FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite, 0);
    private static readonly Open OpenSpindle = path => new SpindleFileStream(path, FileMode.Open, FileAccess.ReadWrite, FileShare.ReadWrite, 0);

    private static void Lock(Stream stream, long position, long length)
    {
        if (stream is FileStream file) file.Lock(position, length); else ((SpindleFileStream)stream).Lock(position, length);
    }

    private static void Unlock(Stream stream, long position, long length)
    {
        if (stream is FileStream file) file.Unlock(position, length); else ((SpindleFileStream)stream).Unlock(position, length);
    }

    public static TheoryData<string> Pairs => new() { "Spindle+Spindle", "Spindle+System.IO", "System.IO+Spindle" };

    private static (Open First, Open Second) Pair(string pair) => pair switch
    {
        "Spindle+Spindle" => (OpenSpindle, OpenSpindle),
        "Spindle+System.IO" => (OpenSpindle, OpenSystem),
        _ => (OpenSystem, OpenSpindle),
    };

    [Theory]
    [MemberData(nameof(Pairs))]
    public void Two_streams_of_one_process_do_not_conflict_like_FileStream(string pair)
    {
        using var dir = new TempDirectory();
        (Open first, Open second) = Pair(pair);
        Assert.Equal(Script(dir.File("system"), OpenSystem, OpenSystem), Script(dir.File("spindle"), first, second));
    }

    // Overlapping and nested locks of both kinds through two streams of this process, unlocks through
    // the other stream, then a third stream closed: what another process can lock after each step.
    private static string Script(string path, Open openFirst, Open openSecond)
    {
        File.WriteAllBytes(path, new byte[100]);
        var log = new List<string>();
        using Stream a = openFirst(path);
        using Stream b = openSecond(path);
        log.Add("a.Lock(0,10) " + Outcome.Of(() => Lock(a, 0, 10)));
        log.Add("b.Lock(1,2) " + Outcome.Of(() => Lock(b, 1, 2)));
        log.Add("b.Lock(5,20) " + Outcome.Of(() => Lock(b, 5, 20)));
        log.Add("a.Lock(0,0) " + Outcome.Of(() => Lock(a, 0, 0)));
        log.Add("other process (50,1): " + ProbeFromChild(path, 50, 1));
        log.Add("b.Unlock(0,0) " + Outcome.Of(() => Unlock(b, 0, 0)));
        log.Add("other process (50,1): " + ProbeFromChild(path, 50, 1));
        log.Add("a.Lock(10,5) " + Outcome.Of(() => Lock(a, 10, 5)));
        log.Add("other process (12,1): " + ProbeFromChild(path, 12, 1));
        using (openFirst(path))
        {
        }
        log.Add("after closing a third stream, other process (12,1): " + ProbeFromChild(path, 12, 1));
        return string.Join("\n", log);
    }

    public static TheoryData<string> Holders => new() { "System.IO", "Spindle" };

    [Theory]
    [MemberData(nameof(Holders))]
    public void Another_process_sees_the_lock_and_both_libraries_report_the_conflict_alike(string holder)
    {
        using var dir = new TempDirectory();
        string path = dir.File("f");
        File.WriteAllBytes(path, new byte[100]);
        using Stream held = (holder == "Spindle" ? OpenSpindle : OpenSystem)(path);
        Lock(held, 10, 20);

        string overlapping = ProbeFromChild(path, 25, 10);
        Assert.StartsWith("System.IO=IOException hr=11 Spindle=IOException hr=11", overlapping);
        Assert.EndsWith("| The process cannot access the file 'PATH' because it is being used by another process."
            + " | The process cannot access the file 'PATH' because it is being used by another process.", overlapping);
        Assert.Equal("System.IO==ok Spindle==ok", ProbeFromChild(path, 30, 10)); // adjacent, not overlapping
        Assert.StartsWith("System.IO=IOException hr=11 Spindle=IOException hr=11", ProbeFromChild(path, 0, 0)); // to the end of the file

        Unlock(held, 10, 20);
        Assert.Equal("System.IO==ok Spindle==ok", ProbeFromChild(path, 25, 10));
    }

    [Fact]
    public void Read_only_streams_take_shared_locks_like_FileStream()
    {
        using var dir = new TempDirectory();
        string path = dir.File("f");
        File.WriteAllBytes(path, new byte[100]);
        string Held(Func<string, Stream> open)
        {
            using Stream held = open(path);
            Lock(held, 0, 50);
            return ProbeFromChild(path, 10, 1, "read") + " / " + ProbeFromChild(path, 10, 1);
        }
        string system = Held(p => new FileStream(p, FileMode.Open, FileAccess.Read, FileShare.ReadWrite, 0));
        string spindle = Held(p => new SpindleFileStream(p, FileMode.Open, FileAccess.Read, FileShare.ReadWrite, 0));
        Assert.StartsWith("System.IO==ok Spindle==ok / System.IO=IOException hr=11", system);
        Assert.Equal(system, spindle);
    }

    // Asks a child process to lock a range with each library and reports both outcomes (the messages
    // of failures included, with the path taken out).
    private static string ProbeFromChild(string path, long position, long length, string access = "write")
    {
        (int exitCode, string output) = ChildProcess.Run(typeof(StreamLockTests), nameof(TryLockInChild), null,
            path, position.ToString(), length.ToString(), access);
        Assert.True(exitCode == 0, output);
        return output.Trim();
    }

    /// <summary>Child: tries <c>Lock(position, length)</c> through a FileStream, then through a SpindleFileStream.</summary>
    public static int TryLockInChild(string[] args)
    {
        string path = args[0];
        long position = long.Parse(args[1]);
        long length = long.Parse(args[2]);
        FileAccess access = args[3] == "read" ? FileAccess.Read : FileAccess.ReadWrite;
        (Outcome Outcome, string Message) Try(Func<Stream> open)
        {
            using Stream stream = open();
            string message = "";
            Outcome outcome = Outcome.Of(() =>
            {
                try
                {
                    Lock(stream, position, length);
                }
                catch (IOException e)
                {
                    message = e.Message.Replace(path, "PATH");
                    throw;
                }
            });
            return (outcome, message);
        }
        // Each probe closes its stream before the next, which drops this process's locks on the file.
        var system = Try(() => new FileStream(path, FileMode.Open, access, FileShare.ReadWrite, 0));
        var spindle = Try(() => new SpindleFileStream(path, FileMode.Open, access, FileShare.ReadWrite, 0));
        Console.Write($"System.IO={system.Outcome} Spindle={spindle.Outcome}");
        if (system.Message.Length + spindle.Message.Length > 0)
        {
            Console.Write($" | {system.Message} | {spindle.Message}");
        }
        return 0;
    }
}
