namespace Spindle.Tests.Reliability.BadInput;

/// <summary>
/// One bad input to one public member: what Spindle is called with, the System.IO call it mirrors
/// (when there is one) and the exception it must give. <see cref="Expected"/> null means "exactly what
/// System.IO does", which may be no exception at all.
/// </summary>
public sealed record BadInputCase(string Input, Action Spindle, Action? SystemIo, Type? Expected)
{
    /// <summary>A known, reported bug this case shows: it is listed, not failed, until the fix lands (then the tag must go).</summary>
    public string? KnownBug { get; init; }

    public static BadInputCase Throws<TException>(string input, Action spindle, Action? systemIo = null) where TException : Exception =>
        new(input, spindle, systemIo, typeof(TException));

    public static BadInputCase SameAsSystemIo(string input, Action spindle, Action systemIo) => new(input, spindle, systemIo, null);

    /// <summary>Runs a call and returns the exception it ended with (thrown or carried by the task), or null.</summary>
    public static Exception? Outcome(Action call)
    {
        try
        {
            call();
            return null;
        }
        catch (Exception e)
        {
            return e;
        }
    }

    /// <summary>The exception's type, and for argument exceptions the parameter it names.</summary>
    public static string Describe(Exception? e) => e switch
    {
        null => "no exception",
        ArgumentException a => $"{a.GetType().Name}({a.ParamName})",
        _ => e.GetType().Name,
    };
}
