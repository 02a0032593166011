using Microsoft.Win32.SafeHandles;
using Spindle.Tests.Infrastructure;
using Xunit.Abstractions;
using SysRandomAccess = System.IO.RandomAccess;

namespace Spindle.Tests.Open;

/// <summary>
/// An <c>O_PATH</c> handle (it names a file but cannot read, write or seek), opened outside System.IO and given
/// to the random-access API: the same exception as System.IO for each call, and FlushToDisk succeeds as its does.
/// </summary>
public class OPathHandleTests(ITestOutputHelper output)
{
    private const int O_PATH = 0x200000;

    public static TheoryData<string> Calls => new() { "Read", "Write", "Read gather", "Write gather", "ReadAsync", "WriteAsync", "GetLength", "SetLength", "FlushToDisk" };

    [Theory]
    [MemberData(nameof(Calls))]
    public async Task A_path_only_handle_fails_or_succeeds_like_System_IO(string call)
    {
        using var dir = new TempDirectory();
        File.WriteAllBytes(dir.File("f"), new byte[100]);
        using SafeFileHandle handle = TestLibc.OpenWithFlags(dir.File("f"), O_PATH);
        string expected = await Outcome(() => Run(call, handle, spindle: false));
        foreach (IoEngine engine in Enum.GetValues<IoEngine>())
        {
            string actual = await Outcome(() => Run(call, handle, spindle: true, engine));
            output.WriteLine($"{call} ({engine}): System.IO {expected}, Spindle {actual}");
            Assert.Equal(expected, actual);
        }
        Assert.Equal(new byte[100], File.ReadAllBytes(dir.File("f")));
    }

    private static async Task Run(string call, SafeFileHandle h, bool spindle, IoEngine engine = IoEngine.Auto)
    {
        byte[] buffer = new byte[10];
        switch (call)
        {
            case "Read": _ = spindle ? SpindleRandomAccess.Read(h, buffer, 0) : SysRandomAccess.Read(h, buffer, 0); break;
            case "Write": if (spindle) SpindleRandomAccess.Write(h, buffer, 0); else SysRandomAccess.Write(h, buffer, 0); break;
            case "Read gather": _ = spindle ? SpindleRandomAccess.Read(h, [buffer, buffer], 0) : SysRandomAccess.Read(h, [buffer, buffer], 0); break;
            case "Write gather":
                if (spindle) SpindleRandomAccess.Write(h, [buffer, buffer], 0); else SysRandomAccess.Write(h, [buffer, buffer], 0);
                break;
            case "ReadAsync": _ = spindle ? await SpindleRandomAccess.ReadAsync(h, buffer, 0, engine) : await SysRandomAccess.ReadAsync(h, buffer, 0); break;
            case "WriteAsync": if (spindle) await SpindleRandomAccess.WriteAsync(h, buffer, 0, engine); else await SysRandomAccess.WriteAsync(h, buffer, 0); break;
            case "GetLength": _ = spindle ? SpindleRandomAccess.GetLength(h) : SysRandomAccess.GetLength(h); break;
            case "SetLength": if (spindle) SpindleRandomAccess.SetLength(h, 5); else SysRandomAccess.SetLength(h, 5); break;
            default: if (spindle) SpindleRandomAccess.FlushToDisk(h); else SysRandomAccess.FlushToDisk(h); break;
        }
    }

    private static async Task<string> Outcome(Func<Task> call)
    {
        try
        {
            await call();
            return "ok";
        }
        catch (Exception e)
        {
            return e.GetType().Name;
        }
    }
}
