using Xunit.Abstractions;

namespace Spindle.Tests.Infrastructure;

/// <summary>
/// xunit 2 cannot skip a running test, so a test whose environment refuses a precondition (a tmpfs
/// mount) returns early and says why: in the test's output and on the runner's stderr.
/// </summary>
public static class SkipReport
{
    public static void Print(ITestOutputHelper output, string test, string reason)
    {
        string line = $"SKIPPED {test}: {reason}";
        output.WriteLine(line);
        Console.Error.WriteLine(line);
    }
}
