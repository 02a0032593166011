using System.Diagnostics;
using Spindle.Tool.Cli;

namespace Spindle.Tool.Bench;

/// <summary>
/// <c>spindle bench --clients</c>: runs the real-client benchmarks (FASTER, ZoneTree, LiteDB, Garnet) of
/// <c>clients/Spindle.Clients.Bench</c> with <c>dotnet run</c>, streaming its output. The tool itself
/// references none of those engines (it stays small), so this works only from a source tree.
/// </summary>
internal static class ClientsBenchForwarder
{
    private const string ProjectPath = "clients/Spindle.Clients.Bench/Spindle.Clients.Bench.csproj";

    public static int Run(IReadOnlyList<string> args, ToolConsole console)
    {
        string? project = FindProject(Directory.GetCurrentDirectory()) ?? FindProject(AppContext.BaseDirectory);
        if (project is null)
        {
            console.Error.WriteLine($"spindle bench --clients: needs Spindle's source tree ({ProjectPath} not found above the current directory); run it from a clone of the repository");
            return 2;
        }
        var start = new ProcessStartInfo("dotnet") { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true };
        foreach (string argument in new[] { "run", "-c", "Release", "--project", project, "--" })
        {
            start.ArgumentList.Add(argument);
        }
        foreach (string argument in args)
        {
            if (argument != "--clients")
            {
                start.ArgumentList.Add(argument);
            }
        }
        using Process child = Process.Start(start) ?? throw new ToolException("could not start dotnet");
        child.OutputDataReceived += (_, e) => { if (e.Data is not null) { console.Out.WriteLine(e.Data); } };
        child.ErrorDataReceived += (_, e) => { if (e.Data is not null) { console.Error.WriteLine(e.Data); } };
        child.BeginOutputReadLine();
        child.BeginErrorReadLine();
        using (console.Cancellation.Register(() => child.Kill(entireProcessTree: true)))
        {
            child.WaitForExit();
        }
        console.Cancellation.ThrowIfCancellationRequested();
        return child.ExitCode;
    }

    /// <summary>The clients bench project in <paramref name="directory"/> or the nearest parent that has one.</summary>
    private static string? FindProject(string directory)
    {
        for (DirectoryInfo? current = new(directory); current is not null; current = current.Parent)
        {
            string candidate = Path.Combine(current.FullName, ProjectPath);
            if (File.Exists(candidate))
            {
                return candidate;
            }
        }
        return null;
    }
}
