using System.Diagnostics;
using System.Reflection;
using System.Runtime.InteropServices;
using System.Text.Json;
using System.Text.Json.Serialization;
using Spindle.Tool.Cli;

namespace Spindle.Tool.Bench;

/// <summary>
/// The one-core cells of the dispatch matrix: measured in a child process (<c>spindle bench
/// --dispatch-child</c>) whose CPU affinity is one CPU from its start, so that the runtime sizes its
/// thread pool and reads <see cref="Environment.ProcessorCount"/> as a one-core machine would, and fio,
/// started by the child, inherits the same CPU. The request goes in on standard input and the cell's
/// figures come back as JSON on standard output.
/// </summary>
internal static partial class DispatchChild
{
    /// <summary>The hidden option of <c>spindle bench</c> that makes it the child.</summary>
    public const string Flag = "--dispatch-child";

    private static readonly JsonSerializerOptions s_json = new()
    {
        NumberHandling = JsonNumberHandling.AllowNamedFloatingPointLiterals,
        Converters = { new JsonStringEnumConverter() },
    };

    /// <summary>What the child measures.</summary>
    public sealed record Request(DispatchCell Cell, DispatchTarget Target, DispatchSettings Settings, double SpinRate, string? Fio, string NoFio);

    /// <summary>Measures <paramref name="request"/>'s cell in a child process pinned to one CPU; a failed child gives a skipped cell with its complaint.</summary>
    public static async Task<DispatchCellResult> MeasureAsync(Request request, CancellationToken cancellation)
    {
        ProcessStartInfo start = ChildStart();
        using Process child = StartOnOneCpu(start);
        Task<string> output = child.StandardOutput.ReadToEndAsync(CancellationToken.None);
        Task<string> errors = child.StandardError.ReadToEndAsync(CancellationToken.None);
        try
        {
            await child.StandardInput.WriteAsync(JsonSerializer.Serialize(request, s_json).AsMemory(), cancellation).ConfigureAwait(false);
            child.StandardInput.Close();
            await child.WaitForExitAsync(cancellation).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            // Gone before the caller releases the storage (a zram device cannot be reset while open).
            child.Kill(entireProcessTree: true);
            await child.WaitForExitAsync(CancellationToken.None).ConfigureAwait(false);
            throw;
        }
        string json = await output.ConfigureAwait(false);
        if (child.ExitCode != 0)
        {
            string complaint = (await errors.ConfigureAwait(false)).Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).LastOrDefault()
                ?? $"exit code {child.ExitCode}";
            return new DispatchCellResult { Cell = request.Cell, Skipped = $"the one-core child failed: {complaint}" };
        }
        return JsonSerializer.Deserialize<DispatchCellResult>(json, s_json) ?? throw new ToolException("the one-core child printed no result");
    }

    /// <summary>The child's side: reads the request from standard input, measures, writes the result to standard output.</summary>
    public static int Run(ToolConsole console)
    {
        Request request = JsonSerializer.Deserialize<Request>(Console.In.ReadToEnd(), s_json) ?? throw new ToolException("no dispatch request on standard input");
        DispatchCellResult result = DispatchRunner.MeasureAsync(request.Cell, request.Target, request.Settings, request.SpinRate, request.Fio, request.NoFio, console.Cancellation)
            .GetAwaiter().GetResult();
        console.Out.Write(JsonSerializer.Serialize(result, s_json));
        return 0;
    }

    // The same tool again: its apphost when that is what runs, else `dotnet Spindle.Tool.dll` (also from a test host).
    private static ProcessStartInfo ChildStart()
    {
        string? self = Environment.ProcessPath;
        bool apphost = self is not null && Assembly.GetEntryAssembly() == typeof(Program).Assembly && Path.GetFileNameWithoutExtension(self) != "dotnet";
        var start = new ProcessStartInfo(apphost ? self! : DotnetHost())
        {
            UseShellExecute = false,
            RedirectStandardInput = true,
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        if (!apphost)
        {
            start.ArgumentList.Add(typeof(Program).Assembly.Location);
        }
        start.ArgumentList.Add("bench");
        start.ArgumentList.Add(Flag);
        return start;
    }

    private static string DotnetHost()
    {
        string? self = Environment.ProcessPath;
        return self is not null && Path.GetFileNameWithoutExtension(self) == "dotnet" ? self : Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") ?? "dotnet";
    }

    /// <summary>
    /// Starts the process with the affinity of the first CPU this process may use: the calling thread
    /// takes that affinity for the moment of the fork (a child inherits its forking thread's mask), then
    /// gets its own back.
    /// </summary>
    private static unsafe Process StartOnOneCpu(ProcessStartInfo start)
    {
        const int MaskBytes = 128;   // 1,024 CPUs
        byte* saved = stackalloc byte[MaskBytes];
        byte* one = stackalloc byte[MaskBytes];
        new Span<byte>(saved, MaskBytes).Clear();
        new Span<byte>(one, MaskBytes).Clear();
        if (SchedGetAffinity(0, MaskBytes, saved) != 0)
        {
            throw new ToolException($"sched_getaffinity failed (errno {Marshal.GetLastPInvokeError()})");
        }
        int cpu = 0;
        while (cpu < MaskBytes * 8 && (saved[cpu / 8] & (1 << (cpu % 8))) == 0)
        {
            cpu++;
        }
        one[cpu / 8] = (byte)(1 << (cpu % 8));
        if (SchedSetAffinity(0, MaskBytes, one) != 0)
        {
            throw new ToolException($"sched_setaffinity failed (errno {Marshal.GetLastPInvokeError()})");
        }
        try
        {
            return Process.Start(start) ?? throw new ToolException("the one-core child did not start");
        }
        finally
        {
            SchedSetAffinity(0, MaskBytes, saved);
        }
    }

    [LibraryImport("libc", EntryPoint = "sched_getaffinity", SetLastError = true)]
    private static unsafe partial int SchedGetAffinity(int pid, nint size, byte* mask);

    [LibraryImport("libc", EntryPoint = "sched_setaffinity", SetLastError = true)]
    private static unsafe partial int SchedSetAffinity(int pid, nint size, byte* mask);
}
