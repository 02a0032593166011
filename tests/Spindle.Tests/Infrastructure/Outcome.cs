namespace Spindle.Tests.Infrastructure;

/// <summary>
/// What one call did: its value, or the type and HResult of the exception it threw. Two outcomes are
/// equal when System.IO and Spindle behaved the same (messages hold paths, so they are not compared).
/// </summary>
public readonly record struct Outcome(string? Value, string? ExceptionType, int HResult)
{
    public bool Threw => ExceptionType is not null;

    public static Outcome Of(Action action)
    {
        try
        {
            action();
            return new Outcome("ok", null, 0);
        }
        catch (Exception e)
        {
            return Failed(e);
        }
    }

    public static Outcome Of<T>(Func<T> function)
    {
        try
        {
            return new Outcome(Convert.ToString(function(), System.Globalization.CultureInfo.InvariantCulture) ?? "null", null, 0);
        }
        catch (Exception e)
        {
            return Failed(e);
        }
    }

    private static Outcome Failed(Exception e)
    {
        // ArgumentException's parameter name is part of System.IO's contract, so it is compared too.
        string type = e is ArgumentException argument ? $"{e.GetType().Name}({argument.ParamName})" : e.GetType().Name;
        return new Outcome(null, type, e.HResult);
    }

    public override string ToString() => Threw ? $"{ExceptionType} hr={HResult}" : $"={Value}";
}
