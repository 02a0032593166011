namespace Spindle.Tool.Cli;

/// <summary>The command line is wrong: the message is printed with the usage hint and the exit code is 2.</summary>
public sealed class UsageException(string message) : Exception(message);

/// <summary>The command cannot do its job (missing directory, no space, unreadable source): exit code 1.</summary>
public sealed class ToolException(string message) : Exception(message);
