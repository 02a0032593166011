using System.Reflection;

namespace Spindle.Tool;

/// <summary>The <c>spindle</c> command line: benchmarks, tuning and copying with Spindle.</summary>
public static class Program
{
    /// <summary>Runs a command and returns the process exit code.</summary>
    public static int Main(string[] args)
    {
        if (args.Length == 1 && args[0] is "--version" or "-v")
        {
            Console.WriteLine($"spindle {typeof(SpindleFile).Assembly.GetCustomAttribute<AssemblyInformationalVersionAttribute>()?.InformationalVersion}");
            return 0;
        }
        Console.Error.WriteLine("usage: spindle --version");
        return 2;
    }
}
