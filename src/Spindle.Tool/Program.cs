using System.Reflection;
using Spindle.Tool.Bench;
using Spindle.Tool.Cli;
using Spindle.Tool.Copy;
using Spindle.Tool.Tune;

namespace Spindle.Tool;

/// <summary>The <c>spindle</c> command line: benchmarks, tuning and copying with Spindle.</summary>
public static class Program
{
    /// <summary>Exit code of a command that was interrupted with Ctrl-C (128 + SIGINT, as shells do).</summary>
    public const int Cancelled = 130;

    private static readonly ICommand[] s_commands =
    [
        new BenchCommand(),
        new TuneCommand(),
        new CopyCommand(),
    ];

    /// <summary>Runs a command and returns the process exit code. Ctrl-C stops the command cleanly.</summary>
    public static int Main(string[] args)
    {
        using var cancellation = new CancellationTokenSource();
        ConsoleCancelEventHandler onCancel = (_, e) =>
        {
            // Keep the process alive so that the command can remove its files and report.
            e.Cancel = true;
            cancellation.Cancel();
        };
        Console.CancelKeyPress += onCancel;
        try
        {
            return Run(args, new ToolConsole(Console.Out, Console.Error, cancellation.Token));
        }
        finally
        {
            Console.CancelKeyPress -= onCancel;
        }
    }

    /// <summary>Runs a command against the given console; the entry point of tests.</summary>
    public static int Run(IReadOnlyList<string> args, ToolConsole console)
    {
        if (args.Count == 0 || args[0] is "--help" or "-h" or "help")
        {
            console.Out.WriteLine(Usage());
            return args.Count == 0 ? 2 : 0;
        }
        if (args[0] is "--version" or "-v")
        {
            console.Out.WriteLine($"spindle {typeof(SpindleFile).Assembly.GetCustomAttribute<AssemblyInformationalVersionAttribute>()?.InformationalVersion}");
            return 0;
        }
        ICommand? command = s_commands.FirstOrDefault(c => c.Name == args[0]);
        if (command is null)
        {
            console.Error.WriteLine($"spindle: unknown command '{args[0]}' (spindle --help lists the commands)");
            return 2;
        }
        try
        {
            return command.Run(args.Skip(1).ToArray(), console);
        }
        catch (UsageException e)
        {
            console.Error.WriteLine($"spindle {command.Name}: {e.Message} (spindle {command.Name} --help for usage)");
            return 2;
        }
        catch (OperationCanceledException) when (console.Cancellation.IsCancellationRequested)
        {
            console.Error.WriteLine($"spindle {command.Name}: cancelled; temporary files removed");
            return Cancelled;
        }
        catch (Exception e) when (e is ToolException or IOException or UnauthorizedAccessException or NotSupportedException)
        {
            console.Error.WriteLine($"spindle {command.Name}: {OneLine(e.Message)}");
            return 1;
        }
    }

    private static string Usage()
    {
        var text = new System.Text.StringBuilder("usage: spindle <command> [options]\n\ncommands:\n");
        foreach (ICommand command in s_commands)
        {
            text.Append($"  {command.Name,-8} {command.Summary}\n");
        }
        text.Append("\n  spindle <command> --help   options of a command\n  spindle --version          the version");
        return text.ToString();
    }

    private static string OneLine(string message) => message.ReplaceLineEndings(" ").Trim();
}
