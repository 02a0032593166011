using System.Diagnostics;
using Spindle.Tests.Infrastructure;

namespace Spindle.Tests.Durability;

/// <summary>Starts a method of this assembly in a child process (as <see cref="ChildProcess"/>), optionally under strace, without waiting for it.</summary>
internal static class DurableChild
{
    internal static Process Start(Type type, string method, string? straceCalls, params string[] args)
    {
        string host = Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") ?? "dotnet";
        var start = new ProcessStartInfo(straceCalls is null ? host : "strace")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        if (straceCalls is not null)
        {
            foreach (string a in new[] { "-f", "-qq", "-e", "trace=" + straceCalls, host })
            {
                start.ArgumentList.Add(a);
            }
        }
        start.ArgumentList.Add(typeof(ChildProcess).Assembly.Location);
        start.ArgumentList.Add(ChildProcess.Verb);
        start.ArgumentList.Add(type.FullName!);
        start.ArgumentList.Add(method);
        foreach (string arg in args)
        {
            start.ArgumentList.Add(arg);
        }
        return Process.Start(start)!;
    }

    /// <summary>Runs the child under strace to its end and returns the system calls it traced (strace writes them to stderr).</summary>
    internal static (int ExitCode, string Trace) Trace(Type type, string method, string calls, params string[] args)
    {
        using Process process = Start(type, method, calls, args);
        Task<string> error = process.StandardError.ReadToEndAsync();
        Task<string> output = process.StandardOutput.ReadToEndAsync();
        if (!process.WaitForExit(60_000))
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException($"child {method} did not finish in 60 s");
        }
        return (process.ExitCode, error.Result + output.Result);
    }

    internal static bool StraceAvailable(out string reason)
    {
        reason = "strace is not installed";
        return File.Exists("/usr/bin/strace") || File.Exists("/bin/strace");
    }
}
