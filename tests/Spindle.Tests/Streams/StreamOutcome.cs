namespace Spindle.Tests.Streams;

/// <summary>What one call did: its result rendered as text, or the type of the exception it threw.</summary>
internal readonly record struct StreamOutcome(string Text)
{
    internal static StreamOutcome Of(Action action)
    {
        try
        {
            action();
            return new("ok");
        }
        catch (Exception e)
        {
            return Failure(e);
        }
    }

    internal static StreamOutcome Of<T>(Func<T> func)
    {
        try
        {
            return new("= " + Render(func()));
        }
        catch (Exception e)
        {
            return Failure(e);
        }
    }

    internal static async Task<StreamOutcome> OfAsync(Func<Task> func)
    {
        try
        {
            await func().WaitAsync(TimeSpan.FromSeconds(30));
            return new("ok");
        }
        catch (Exception e)
        {
            return Failure(e);
        }
    }

    internal static async Task<StreamOutcome> OfAsync<T>(Func<Task<T>> func)
    {
        try
        {
            return new("= " + Render(await func().WaitAsync(TimeSpan.FromSeconds(30))));
        }
        catch (Exception e)
        {
            return Failure(e);
        }
    }

    private static StreamOutcome Failure(Exception e) => new("throws " + e.GetType().Name);

    private static string Render<T>(T value) => value is byte[] bytes ? Convert.ToHexString(bytes) : value?.ToString() ?? "null";

    public override string ToString() => Text;
}
