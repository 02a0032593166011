using System.Reflection;
using Spindle.Tool.Bench;
using Spindle.Tool.Cli;
using Spindle.Tool.Copy;
using Spindle.Tool.Tune;

namespace Spindle.Tool;

/// <summary>The <c>spindle</c> command line: benchmarks, tuning and copying with Spindle.</summary>
public static class Program
{
    /// <summary>Exit code of a command that was interrupted with Ctrl-C (128 + SIGINT, as shells do); SIGTERM gives 143.</summary>
    public const int Cancelled = 130;

    private static readonly ICommand[] s_commands =
    [
        new BenchCommand(),
        new TuneCommand(),
        new CopyCommand(),
    ];

    /// <summary>Runs a command and returns the process exit code. Ctrl-C and SIGTERM stop the command cleanly.</summary>
    public static int Main(string[] args)
    {
        using var signals = new StopSignals();
        try
        {
            return Run(args, new ToolConsole(new StandardOutput(Console.Out), Console.Error, signals.Token)
            {
                ErrorIsTerminal = !Console.IsErrorRedirected,
                CancelledExitCode = () => signals.ExitCode,
                CancelledBy = () => signals.Name,
            });
        }
        catch (ToolException e)
        {
            // Only standard output's failures get here (help and version are written outside a command).
            Console.Error.WriteLine($"spindle: {OneLine(e.Message)}");
            return 1;
        }
    }

    /// <summary>Runs a command against the given console; the entry point of tests.</summary>
    public static int Run(IReadOnlyList<string> args, ToolConsole console)
    {
        if (args.Count == 0)
        {
            console.Error.WriteLine(Usage());
            return 2;
        }
        if (args[0] is "--help" or "-h" or "help")
        {
            if (args.Count > 1 && s_commands.FirstOrDefault(c => c.Name == args[1]) is { } named)
            {
                console.Out.WriteLine(named.Help);
                return 0;
            }
            console.Out.WriteLine(Usage());
            return 0;
        }
        if (args[0] is "--version" or "-v")
        {
            if (args.Count > 1)
            {
                console.Error.WriteLine($"spindle: {args[0]} takes no arguments, got '{args[1]}' (spindle --help for usage)");
                return 2;
            }
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
            console.Error.WriteLine($"spindle {command.Name}: cancelled by {console.CancelledBy()}; temporary files removed");
            return console.CancelledExitCode();
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
        text.Append("\n  spindle <command> --help   options of a command (also: spindle help <command>)\n  spindle --version          the version\n\n"
            + "exit codes: 0 done, 1 the command could not do its job, 2 bad command line, 130 Ctrl-C, 143 SIGTERM\n"
            + "(Ctrl-C and SIGTERM stop the command and remove its temporary files first)");
        return text.ToString();
    }

    private static string OneLine(string message) => message.ReplaceLineEndings(" ").Trim();
}
