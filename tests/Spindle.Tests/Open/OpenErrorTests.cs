using Spindle.Tests.Engines;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Open;

/// <summary>
/// Paths whose open the kernel refuses in unusual ways, on every mode and access, synchronous and asynchronous, on
/// every engine: the exception type (and HResult) must be System.IO's. An existing file named with a trailing slash
/// (<c>open(2)</c> says EISDIR with O_CREAT, ENOTDIR without), and a directory that exists but refuses creation
/// (<c>/proc/self</c>: ENOENT, which System.IO blames on the file because the directory exists).
/// </summary>
public class OpenErrorTests
{
    public static TheoryData<IoEngine> Engines => new() { IoEngine.Auto, IoEngine.Sync, IoEngine.ThreadPool, IoEngine.IoUring };

    /// <summary>The refusing paths, given a directory that holds an existing file "file" and a directory "dir".</summary>
    private static string[] RefusingPaths(TempDirectory directory)
    {
        File.WriteAllBytes(directory.File("file"), OpenDifferential.InitialContent);
        Directory.CreateDirectory(directory.File("dir"));
        return [directory.File("file") + "/", directory.File("file") + "/child", directory.File("dir") + "/", "/proc/self/spindle-refused", "/proc/spindle-refused"];
    }

    [Theory]
    [MemberData(nameof(Engines))]
    public async Task Refused_opens_throw_System_IOs_exception_for_every_mode_and_access(IoEngine engine)
    {
        EngineCases.ReportIoUring(engine);
        using var directory = new TempDirectory();
        var differences = new List<string>();
        foreach (string path in RefusingPaths(directory))
        {
            foreach (FileMode mode in Enum.GetValues<FileMode>())
            {
                foreach (FileAccess access in Enum.GetValues<FileAccess>())
                {
                    var spindle = new SpindleFileOptions { Mode = mode, Access = access, Engine = engine };
                    var system = new FileStreamOptions { Mode = mode, Access = access };
                    Outcome expected = Outcome.Of(() => File.OpenHandle(path, mode, access).Dispose());
                    Outcome expectedStream = Outcome.Of(() => new FileStream(path, system).Dispose());
                    var actual = new (string Name, Outcome Expected, Outcome Actual)[]
                    {
                        ("OpenHandle", expected, Outcome.Of(() => SpindleFile.OpenHandle(path, spindle).Dispose())),
                        ("OpenHandleAsync", expected, await OutcomeOf(async () => (await SpindleFile.OpenHandleAsync(path, spindle)).Dispose())),
                        ("new SpindleFileStream", expectedStream, Outcome.Of(() => new SpindleFileStream(path, spindle).Dispose())),
                        ("SpindleFileStream.OpenAsync", expectedStream, await OutcomeOf(async () => await (await SpindleFileStream.OpenAsync(path, spindle)).DisposeAsync())),
                    };
                    if (engine == IoEngine.Auto)
                    {
                        actual =
                        [
                            .. actual,
                            ("OpenHandle (defaults)", expected, Outcome.Of(() => SpindleFile.OpenHandle(path, mode, access).Dispose())),
                            ("OpenHandleAsync (defaults)", expected, await OutcomeOf(async () => (await SpindleFile.OpenHandleAsync(path, mode, access)).Dispose())),
                        ];
                    }
                    foreach (var (name, want, got) in actual)
                    {
                        if (want != got)
                        {
                            differences.Add($"{name} {path} {mode}/{access}: System.IO {want}, Spindle {got}");
                        }
                    }
                }
            }
        }
        Assert.True(differences.Count == 0, string.Join("\n", differences));
        Assert.Equal(OpenDifferential.InitialContent, File.ReadAllBytes(directory.File("file")));
    }

    /// <summary>An asynchronous call's outcome, whether it throws from the call or through its task.</summary>
    private static async Task<Outcome> OutcomeOf(Func<Task> call)
    {
        try
        {
            await call();
            return Outcome.Of(() => { });
        }
        catch (Exception e)
        {
            return Outcome.Of(() => throw e);
        }
    }
}
