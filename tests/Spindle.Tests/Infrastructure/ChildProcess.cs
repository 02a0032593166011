using System.Diagnostics;
using System.Reflection;

namespace Spindle.Tests.Infrastructure;

/// <summary>
/// Runs a public static method of this test assembly in a fresh process (for process-wide state:
/// AppContext switches read once, resource limits, signals, descriptor inheritance). The method has
/// the shape <c>static int Name(string[] args)</c>; what it writes to stdout comes back to the test.
/// </summary>
public static class ChildProcess
{
    internal const string Verb = "child";

    /// <summary>Runs <paramref name="method"/> (a method of <paramref name="type"/>) in a child and returns its exit code and output.</summary>
    public static (int ExitCode, string Output) Run(Type type, string method, IReadOnlyDictionary<string, string>? environment = null,
        params string[] args)
    {
        string host = Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") ?? "dotnet";
        var start = new ProcessStartInfo(host)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        start.ArgumentList.Add(typeof(ChildProcess).Assembly.Location);
        start.ArgumentList.Add(Verb);
        start.ArgumentList.Add(type.FullName!);
        start.ArgumentList.Add(method);
        foreach (string arg in args)
        {
            start.ArgumentList.Add(arg);
        }
        if (environment is not null)
        {
            foreach ((string key, string value) in environment)
            {
                start.Environment[key] = value;
            }
        }

        using Process process = Process.Start(start)!;
        Task<string> error = process.StandardError.ReadToEndAsync();
        Task<string> output = process.StandardOutput.ReadToEndAsync();
        if (!process.WaitForExit(60_000))
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException($"child {type.Name}.{method} did not finish in 60 s");
        }
        return (process.ExitCode, output.Result + error.Result);
    }

    /// <summary>The child's side: finds and runs the named method.</summary>
    internal static int RunInChild(string[] args)
    {
        Type type = typeof(ChildProcess).Assembly.GetType(args[0], throwOnError: true)!;
        MethodInfo method = type.GetMethod(args[1], BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Static)
            ?? throw new MissingMethodException(args[0], args[1]);
        return (int)method.Invoke(null, [args[2..]])!;
    }
}

/// <summary>The test assembly's entry point: unused by the test runner, used by <see cref="ChildProcess"/>.</summary>
public static class TestProgram
{
    public static int Main(string[] args) =>
        args.Length >= 3 && args[0] == ChildProcess.Verb ? ChildProcess.RunInChild(args[1..]) : 0;
}
