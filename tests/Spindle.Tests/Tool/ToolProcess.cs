using System.Diagnostics;
using System.Runtime.InteropServices;
using System.Text;

namespace Spindle.Tests.Tool;

/// <summary>
/// The spindle tool in a child process (<c>dotnet Spindle.Tool.dll</c> from the test's output folder),
/// with standard output and error redirected, so tests see what a pipe or a log file sees and can send
/// it real signals.
/// </summary>
internal sealed partial class ToolProcess : IDisposable
{
    private readonly Process _process;
    private readonly StringBuilder _error = new();   // every character of standard error so far, under its own lock
    private readonly Task<string> _output;
    private readonly Task _errorPump;

    private ToolProcess(Process process)
    {
        _process = process;
        _output = process.StandardOutput.ReadToEndAsync();
        _errorPump = Task.Run(async () =>
        {
            char[] buffer = new char[4096];
            int n;
            while ((n = await process.StandardError.ReadAsync(buffer)) > 0)
            {
                lock (_error)
                {
                    _error.Append(buffer, 0, n);
                }
            }
        });
    }

    private const string EnvCommand = "/usr/bin/env";

    /// <summary>Starts <c>spindle</c> with <paramref name="args"/>.</summary>
    public static ToolProcess Start(params string[] args)
    {
        string host = Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") ?? "dotnet";
        // A test run started in the background (a CI script's `cmd &`, nohup) inherits SIGINT as ignored, and an
        // ignored signal stays ignored across exec, so the tool could never see the Ctrl-C the tests send.
        // env (coreutils) puts SIGINT and SIGTERM back to their defaults and then execs the host (same pid).
        var start = new ProcessStartInfo(EnvCommand) { RedirectStandardOutput = true, RedirectStandardError = true };
        start.ArgumentList.Add("--default-signal=INT,TERM");
        start.ArgumentList.Add(host);
        start.ArgumentList.Add(Path.Combine(AppContext.BaseDirectory, "Spindle.Tool.dll"));
        foreach (string arg in args)
        {
            start.ArgumentList.Add(arg);
        }
        return new ToolProcess(Process.Start(start)!);
    }

    /// <summary>Standard error so far.</summary>
    public string Error
    {
        get
        {
            lock (_error)
            {
                return _error.ToString();
            }
        }
    }

    /// <summary>Waits until <paramref name="condition"/> holds, the process exits, or a minute passes; true when the condition held.</summary>
    public bool WaitUntil(Func<bool> condition)
    {
        var clock = Stopwatch.StartNew();
        while (clock.Elapsed < TimeSpan.FromMinutes(1))
        {
            if (condition())
            {
                return true;
            }
            if (_process.HasExited)
            {
                return condition();
            }
            Thread.Sleep(20);
        }
        return false;
    }

    /// <summary>Sends a signal (15 for SIGTERM, 2 for SIGINT) to the tool.</summary>
    public void Signal(int signal) => Assert.Equal(0, Kill(_process.Id, signal));

    /// <summary>Waits for the exit (at most a minute) and returns the exit code, standard output and standard error.</summary>
    public (int ExitCode, string Out, string Error) WaitForExit()
    {
        if (!_process.WaitForExit(60_000))
        {
            _process.Kill(entireProcessTree: true);
            throw new TimeoutException("spindle did not exit within a minute");
        }
        _process.WaitForExit();
        _errorPump.Wait();
        return (_process.ExitCode, _output.Result, Error);
    }

    public void Dispose()
    {
        if (!_process.HasExited)
        {
            _process.Kill(entireProcessTree: true);
            _process.WaitForExit();
        }
        _process.Dispose();
    }

    [LibraryImport("libc", EntryPoint = "kill", SetLastError = true)]
    private static partial int Kill(int pid, int signal);
}
