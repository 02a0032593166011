namespace Spindle.Tool.Cli;

/// <summary>One <c>spindle</c> subcommand.</summary>
public interface ICommand
{
    /// <summary>The word after <c>spindle</c>.</summary>
    string Name { get; }

    /// <summary>One line for the command list.</summary>
    string Summary { get; }

    /// <summary>The full <c>--help</c> text.</summary>
    string Help { get; }

    /// <summary>Runs the command; returns the exit code. Throws <see cref="UsageException"/> or <see cref="ToolException"/> for bad input.</summary>
    int Run(IReadOnlyList<string> args, ToolConsole console);
}
